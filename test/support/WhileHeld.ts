/**
 * "Never waits for a locked row", observed without timing anything (PostgreSQL only): `first`
 * runs in a transaction kept open, so the rows it locked stay locked, while `second` runs in a
 * transaction of its own with `lock_timeout` set. Had `second` waited for a row `first` holds, it
 * fails with lock_not_available instead of returning; its failure comes back as text, naming
 * `what`. Then `first` commits.
 */
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"

export const whileHeld = <A, B, E1, E2, R1, R2>(what: string, first: Effect.Effect<A, E1, R1>, second: Effect.Effect<B, E2, R2>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const firstDone = yield* Deferred.make<A>()
    const release = yield* Deferred.make<void>()
    const firstFiber = yield* Effect.forkChild(Effect.gen(function*() {
      yield* Deferred.succeed(firstDone, yield* first)
      yield* Deferred.await(release)
    }).pipe(sql.withTransaction))
    const firstResult = yield* Deferred.await(firstDone)
    const secondResult = yield* Effect.gen(function*() {
      yield* sql`SET LOCAL lock_timeout = '5s'`
      return yield* second
    }).pipe(
      sql.withTransaction,
      Effect.catchCause((cause) => Effect.succeed(`the second ${what} failed: ${cause}`)),
      Effect.ensuring(Deferred.succeed(release, undefined))
    )
    yield* Fiber.join(firstFiber)
    return { first: firstResult, second: secondResult }
  })
