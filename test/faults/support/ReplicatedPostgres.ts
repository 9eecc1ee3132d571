/**
 * A primary and its streaming standby, both the fault suite's own (ThrowawayPostgres.ts): the
 * production shape of docs/failover.md. Synchronous (`synchronous_standby_names` naming the
 * standby, `synchronous_commit = on`: a commit is acknowledged once the standby has it) or
 * asynchronous (the negative control). The standby names no synchronous standby of its own, so
 * that once promoted, with no standby left, its commits do not wait (Patroni's synchronous_mode
 * without strict does the same).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../support/Eventually.ts"
import { withDatabase } from "./Outcomes.ts"
import { ThrowawayPostgres } from "./ThrowawayPostgres.ts"

const standbyName = "standby1"

export interface Replicated {
  readonly primary: ThrowawayPostgres
  readonly standby: ThrowawayPostgres
  /** Stops both and deletes their directories. */
  readonly remove: () => Promise<void>
}

/** The sync_state of the standby's stream as the primary reports it (`sync`, `async`), or "none". */
const streamState = (primaryUrl: string): Promise<string> =>
  withDatabase(
    primaryUrl,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ state: string }>`SELECT sync_state AS state FROM pg_stat_replication
      WHERE application_name = ${standbyName} AND state = 'streaming'`
      return rows[0]?.state ?? "none"
    })
  )

/** Starts a primary, then its standby, and waits until the standby streams as asked. */
export const startReplicated = async (synchronous: boolean): Promise<Replicated> => {
  const primary = await ThrowawayPostgres.start(
    synchronous ? { synchronous_standby_names: standbyName, synchronous_commit: "on" } : {}
  )
  let standby: ThrowawayPostgres | undefined
  try {
    standby = await ThrowawayPostgres.standbyOf(primary, standbyName, { synchronous_standby_names: "" })
    await eventually(
      () => streamState(primary.url),
      (s) => s === (synchronous ? "sync" : "async"),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: `the standby streaming (${synchronous ? "sync" : "async"})`
      }
    )
    const both = [primary, standby]
    return { primary, standby, remove: async () => void (await Promise.all(both.map((pg) => pg.remove()))) }
  } catch (e) {
    await Promise.all([primary.remove(), standby?.remove()])
    throw e
  }
}

/** Whether the standby's WAL receiver runs (it streams from its primary). */
export const receivesWal = (standbyUrl: string): Promise<boolean> =>
  withDatabase(
    standbyUrl,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ n: number }>`SELECT count(*)::integer AS n FROM pg_stat_wal_receiver`
      return row!.n > 0
    })
  )
