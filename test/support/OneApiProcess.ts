/**
 * The OneAPI simulator as an operator runs it (docs/operators.md#the-oneapi-simulator,
 * SimulatorProcess.ts), and what it took, read from the journal in its data directory
 * (simulator/oneapi/Book.ts), which holds every correlator it took, whatever happened to the
 * process since.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Entry } from "../../simulator/oneapi/Book.ts"
import { type SimulatorProcess, startSimulatorProcess } from "./SimulatorProcess.ts"

/** A OneAPI simulator process (SimulatorProcess.ts). */
export type OneApiProcess = SimulatorProcess

/** Starts the simulator on `port` with `dataDir` (and `env`), once it listens; fails with its output if it exits first. */
export const startOneApiProcess = (port: number, dataDir: string, env: Record<string, string> = {}) =>
  startSimulatorProcess("oneapi", port, dataDir, env)

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
