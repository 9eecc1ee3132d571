/**
 * The OneAPI simulator as an operator runs it (docs/operators.md#the-oneapi-simulator): `node
 * simulator/oneapi/main.ts` (the project's Node, directly, so that a kill -9 reaches it) in a
 * child process on a port and a data directory, its output kept; and what it took, read from the
 * journal in that directory (simulator/oneapi/Book.ts), which holds every correlator it took,
 * whatever happened to the process since.
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Entry } from "../../simulator/oneapi/Book.ts"
import { eventually } from "./Eventually.ts"
import { node, root } from "./ServiceProcess.ts"
import type { SmscProcess } from "./SmscProcess.ts"

/** A simulator process: its child, its output, and when it ended (SmscProcess.ts's `kill9` ends it). */
export type OneApiProcess = SmscProcess

/** Starts the simulator on `port` with `dataDir` (and `env`), once it listens; fails with its output if it exits first. */
export const startOneApiProcess = async (
  port: number,
  dataDir: string,
  env: Record<string, string> = {}
): Promise<OneApiProcess> => {
  const child = spawn(node, ["simulator/oneapi/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", SMS_ONEAPI_PORT: String(port), SMS_ONEAPI_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  await eventually(
    async () => output,
    (o) => o.includes("OneAPI simulator listening") || child.exitCode !== null,
    { timeoutMs: 30_000, what: "the OneAPI simulator listening" }
  )
  if (child.exitCode !== null) throw new Error(`the OneAPI simulator exited: ${output}`)
  return { child, output: () => output, exited }
}

/** A message the simulator took: its client correlator (the service's message id) and the id it gave. */
export interface TakenSms {
  readonly correlator: string
  readonly id: number
}

/**
 * Every message the simulator of `dataDir` took, from its journal, oldest first (a line cut by a
 * kill is skipped). Read while the simulator that wrote it still runs: a new one compacts it.
 */
export const takenSms = (dataDir: string): ReadonlyArray<TakenSms> =>
  readFileSync(join(dataDir, "journal.jsonl"), "utf8")
    .split("\n")
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as Entry
        return entry.kind === "taken" ? [{ correlator: entry.correlator, id: entry.id }] : []
      } catch {
        return []
      }
    })
