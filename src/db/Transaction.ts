/**
 * Transactions that fail, rather than die, when their ROLLBACK fails. effect/sql turns a failed
 * ROLLBACK into a defect and drops the failure that caused it; in a database outage the
 * connection is gone, so every transaction cut midway dies, and what retries transient failures
 * (the settlement's sets, the background loops) never sees it: a settlement set was dropped that
 * way, leaving its messages `processing` for as long as their process lived. Here the
 * ROLLBACK's SqlError is the failure: the transaction did not commit, so it may run again.
 */
import { Effect } from "effect"
import { type SqlClient, SqlError } from "effect/sql"

/** `sql.withTransaction`, failing with the SqlError of a failed ROLLBACK instead of dying of it. */
export const inTransaction = (sql: Pick<SqlClient.SqlClient, "withTransaction">) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  sql.withTransaction(effect).pipe(
    Effect.catchDefect((defect) => SqlError.isSqlError(defect) ? Effect.fail(defect) : Effect.die(defect))
  )
