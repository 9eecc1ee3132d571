/**
 * Transactions for the services: what must commit together (an admission, a settlement set)
 * runs in `transaction`, whose BEGIN, COMMIT and ROLLBACK failures are decided like any
 * statement's (Statements.ts), so a service composes its stores' calls without ever seeing a SqlError.
 * A transaction cut by an outage fails, rather than dies, even when its ROLLBACK fails too
 * (inTransaction, below), so that whoever retries transient failures runs it again.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { fromDatabase } from "./Statements.ts"

/**
 * `sql.withTransaction`, failing with the SqlError of a failed ROLLBACK instead of dying of it.
 * effect/sql turns a failed ROLLBACK into a defect and drops the failure that caused it; in a database outage the
 * connection is gone, so every transaction cut midway dies, and what retries transient failures
 * (the settlement's sets, the background loops) never sees it: a settlement set was dropped that
 * way, leaving its messages `processing` for as long as their process lived. Here the
 * ROLLBACK's SqlError is the failure: the transaction did not commit, so it may run again.
 */
export const inTransaction =
  (sql: Pick<SqlClient.SqlClient, "withTransaction">) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
    sql
      .withTransaction(effect)
      .pipe(Effect.catchDefect((defect) => (SqlError.isSqlError(defect) ? Effect.fail(defect) : Effect.die(defect))))

export class Transactions extends Context.Service<
  Transactions,
  {
    /** Runs `effect` in one transaction (inside another: a savepoint of it). */
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | DatabaseUnavailable, R>
    /**
     * Runs `effect` in one transaction holding the advisory lock `key` until it ends: processes
     * starting at once (the demo organisation of a first start) do it one after the other.
     */
    readonly locked: (
      key: number
    ) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | DatabaseUnavailable, R>
  }
>()("sms/Transactions") {
  static readonly layer = Layer.effect(
    Transactions,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const inOne = inTransaction(sql)
      // the statements inside come from stores (decided already): what is left is BEGIN, COMMIT, ROLLBACK
      const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | DatabaseUnavailable, R> =>
        Effect.catchIf(inOne(effect), SqlError.isSqlError, (error) => fromDatabase(Effect.fail(error)))
      return Transactions.of({
        transaction,
        locked: (key) => (effect) =>
          transaction(Effect.andThen(fromDatabase(sql`SELECT pg_advisory_xact_lock(${key})`), effect))
      })
    })
  )
}
