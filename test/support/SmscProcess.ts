/**
 * The SMSC simulator as an operator runs it (SimulatorProcess.ts), and what it took, read from
 * the journal in its data directory (simulator/Journal.ts), which holds every message it took,
 * whatever happened to the process since.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Entry, KnownMessage } from "../../simulator/smsc/Entries.ts"
import { type SmscCounts, statsFile } from "../../simulator/smsc/Stats.ts"
import { type SimulatorProcess, startSimulatorProcess } from "./SimulatorProcess.ts"

/** An SMSC simulator process (SimulatorProcess.ts). */
export type SmscProcess = SimulatorProcess

/** Starts the simulator on `port` with `dataDir` (and `env`), once it listens; fails with its output if it exits first. */
export const startSmscProcess = (port: number, dataDir: string, env: Record<string, string> = {}) =>
  startSimulatorProcess("smsc", port, dataDir, env)

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
