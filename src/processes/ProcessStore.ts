/**
 * The table of live service processes (`workers`), owned here: one row per process, its lease
 * renewed while it runs. Other modules' statements compose the fragments at the end to tell a
 * dead process's work from a live one's.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"

export class ProcessStore extends Context.Service<
  ProcessStore,
  {
    /** Registers the process, or renews its lease until `leaseUntil`. */
    readonly renew: (workerId: string, startedAt: Date, leaseUntil: Date) => Effect.Effect<void, DatabaseUnavailable>
    /** Gives up the process's lease (it stops). */
    readonly remove: (workerId: string) => Effect.Effect<void, DatabaseUnavailable>
    /** Forgets processes whose lease ran out before `before` and for which `stillNeeded(w)` (a predicate on the row `w`) is false. */
    readonly forgetDead: (before: Date, stillNeeded: Statement.Fragment) => Effect.Effect<void, DatabaseUnavailable>
  }
>()("sms/ProcessStore") {
  static readonly layer = Layer.effect(
    ProcessStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return ProcessStore.of({
        renew: (workerId, startedAt, leaseUntil) =>
          fromDatabase(
            sql`INSERT INTO workers (id, started_at, lease_until, pid)
          VALUES (${workerId}, ${startedAt}, ${leaseUntil}, ${process.pid})
          ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until`.pipe(Effect.asVoid)
          ),
        remove: (workerId) => fromDatabase(sql`DELETE FROM workers WHERE id = ${workerId}`.pipe(Effect.asVoid)),
        forgetDead: (before, stillNeeded) =>
          fromDatabase(
            sql`DELETE FROM workers AS w WHERE w.lease_until < ${before} AND NOT (${stillNeeded})`.pipe(Effect.asVoid)
          )
      })
    })
  )
}

/** Fragments for statements composed elsewhere. */
export const workerFragments = (sql: SqlClient.SqlClient) => ({
  /** The join giving a row aliased `alias` with a `worker_id` its process as `w` (null when that process is gone). */
  leaseOf: (alias: string) => sql`LEFT JOIN workers AS w ON w.id = ${sql(alias)}.worker_id`,
  /** Whether the process joined as `w` is dead at `at`: gone, or its lease ran out. */
  isDead: (at: Date) => sql`(w.id IS NULL OR w.lease_until < ${at})`
})
