/**
 * Transactions for the services: what must commit together (an admission, a settlement set)
 * runs in `transaction`, whose BEGIN, COMMIT and ROLLBACK failures are decided like any
 * statement's (Store.ts), so a service composes its stores' calls without ever seeing a SqlError.
 * A transaction cut by an outage fails, rather than dies, even when its ROLLBACK fails too
 * (Transaction.ts), so that whoever retries transient failures runs it again.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { fromDatabase } from "./Store.ts"
import { inTransaction } from "./Transaction.ts"

export class Transactions extends Context.Service<Transactions, {
  /** Runs `effect` in one transaction (inside another: a savepoint of it). */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | DatabaseUnavailable, R>
  /**
   * Runs `effect` in one transaction holding the advisory lock `key` until it ends: processes
   * starting at once (the demo organisation of a first start) do it one after the other.
   */
  readonly locked: (key: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | DatabaseUnavailable, R>
}>()("sms/Transactions") {
  static readonly layer = Layer.effect(Transactions, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const inOne = inTransaction(sql)
    // the statements inside come from stores (decided already): what is left is BEGIN, COMMIT, ROLLBACK
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | DatabaseUnavailable, R> =>
      Effect.catchIf(inOne(effect), SqlError.isSqlError, (error) => fromDatabase(Effect.fail(error)))
    return Transactions.of({
      transaction,
      locked: (key) => (effect) => transaction(Effect.andThen(fromDatabase(sql`SELECT pg_advisory_xact_lock(${key})`), effect))
    })
  }))
}
