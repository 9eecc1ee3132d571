/**
 * The SMSC simulator as an operator runs it: `node simulator/smsc/main.ts` (the project's Node,
 * directly, so that a kill -9 reaches it) in a child process on a port and a data directory,
 * its output kept; and what it took, read from the journal in that directory (simulator/Journal.ts), which
 * holds every message it took, whatever happened to the process since.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Entry, KnownMessage } from "../../simulator/smsc/Entries.ts"
import { type SmscCounts, statsFile } from "../../simulator/smsc/Stats.ts"
import { eventually } from "./Eventually.ts"
import { node, root } from "./ServiceProcess.ts"

export interface SmscProcess {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves once the process has ended. */
  readonly exited: Promise<void>
}

/** Starts the simulator on `port` with `dataDir` (and `env`), once it listens; fails with its output if it exits first. */
export const startSmscProcess = async (
  port: number,
  dataDir: string,
  env: Record<string, string> = {}
): Promise<SmscProcess> => {
  const child = spawn(node, ["simulator/smsc/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", SMS_SMSC_PORT: String(port), SMS_SMSC_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  await eventually(
    async () => output,
    (o) => o.includes("SMSC simulator listening") || child.exitCode !== null,
    {
      timeoutMs: 30_000,
      what: "the simulator listening"
    }
  )
  if (child.exitCode !== null) throw new Error(`the simulator exited: ${output}`)
  return { child, output: () => output, exited }
}

/** `kill -9` of the simulator; resolves once it is gone. */
export const kill9 = async (smsc: SmscProcess): Promise<void> => {
  if (smsc.child.exitCode === null && smsc.child.signalCode === null) smsc.child.kill("SIGKILL")
  await smsc.exited
}

/** What the simulator of `dataDir` counted (binds per account at once, submissions per second), as its stats.json says. */
export const smscCounts = (dataDir: string): SmscCounts =>
  JSON.parse(readFileSync(join(dataDir, statsFile), "utf8")) as SmscCounts

/** Every message the simulator of `dataDir` took, from its journal, oldest first (a line cut by a kill is skipped). */
export const takenMessages = (dataDir: string): ReadonlyArray<KnownMessage> =>
  readFileSync(join(dataDir, "journal.jsonl"), "utf8")
    .split("\n")
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as Entry
        return entry.kind === "taken" ? [entry.message] : []
      } catch {
        return []
      }
    })
