/**
 * The set-up every fault test file shares: its own throwaway PostgreSQL for the file's tests and,
 * after them, the service processes they started killed, their outputs saved and the server removed.
 */
import { afterAll, beforeAll } from "vitest"
import { killAll, saveOutputs } from "../../support/ServedProcess.ts"
import { ThrowawayPostgres } from "./ThrowawayPostgres.ts"

/** Registers the file's set-up; the returned function gives the server inside a test. `outputs` names the saved outputs. */
export const useThrowawayPostgres = (outputs: string): (() => ThrowawayPostgres) => {
  let pg: ThrowawayPostgres | undefined
  beforeAll(async () => {
    pg = await ThrowawayPostgres.start()
  })
  afterAll(async () => {
    await killAll()
    saveOutputs(outputs)
    await pg?.remove()
  })
  return () => {
    if (pg === undefined) throw new Error("the throwaway PostgreSQL did not start")
    return pg
  }
}
