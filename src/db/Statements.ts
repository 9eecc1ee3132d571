/**
 * The boundary every store passes its statements through: what a failed statement means is
 * decided here, once. A failure that running the same work again may get past (the database
 * unreachable or not serving now, a deadlock or serialization conflict) becomes
 * DatabaseUnavailable, a typed failure; any other is a fault of ours and dies (the edge answers
 * 500 internal_error and logs it). Nothing above the stores sees a SqlError.
 */
import { Effect } from "effect"
import type { SqlError, Statement } from "effect/sql"
import { DatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { isTransient } from "./SqlErrors.ts"

/** `effect` with its SqlError decided: DatabaseUnavailable when transient, a defect otherwise. */
export const fromDatabase = <A, R>(
  effect: Effect.Effect<A, SqlError.SqlError, R>
): Effect.Effect<A, DatabaseUnavailable, R> =>
  Effect.catchTag(effect, "SqlError", (error) =>
    isTransient(error) ? Effect.fail(new DatabaseUnavailable(error)) : Effect.die(error)
  )

/**
 * Runs `statement` unprepared, so that each run is planned for the tables as they are. For the
 * statements over queues (receipts, the simulator's rows), which go from empty to tens of
 * thousands of rows within a minute: a prepared statement's generic plan, cached while a queue
 * was empty, joined it in nested loops, quadratic in the backlog (seconds a statement), until an
 * ANALYZE came to invalidate it. Planning costs a little CPU at each run, so the statements of
 * every request (admission above all) stay prepared.
 */
export const replanned = <A>(statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> =>
  statement.unprepared
