/**
 * "Never waits for a locked row", observed without timing anything (PostgreSQL only): `first`
 * runs in a transaction kept open, so the rows it locked stay locked, while `second` runs in a
 * transaction of its own with `lock_timeout` set. Had `second` waited for a row `first` holds, it
 * fails with lock_not_available instead of returning; its failure comes back as text, naming
 * `what`. Then `first` commits.
 */
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { setTimeout as sleep } from "node:timers/promises"

/**
 * Runs `hold` in a transaction kept open while `effect` runs, then ends that transaction; it
 * ends anyway after `holdMs` of real time, so that an `effect` that waits for what `hold` locked
 * comes back late (and fails its test's assertions) rather than hanging. Both results.
 */
export const whileHolding = <H, A, EH, E, RH, R>(
  hold: Effect.Effect<H, EH, RH>,
  effect: Effect.Effect<A, E, R>,
  holdMs: number
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const held = yield* Deferred.make<H>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.forkChild(
      Effect.gen(function* () {
        yield* Deferred.succeed(held, yield* hold)
        yield* Effect.raceFirst(
          Deferred.await(release),
          Effect.promise((signal) => sleep(holdMs, undefined, { signal }).catch(() => undefined))
        )
      }).pipe(sql.withTransaction)
    )
    const heldResult = yield* Deferred.await(held)
    const result = yield* effect.pipe(Effect.ensuring(Deferred.succeed(release, undefined)))
    yield* Fiber.join(holder)
    return { held: heldResult, result }
  })

/** Longer than `second`'s lock_timeout: a `second` that waits fails before `first` lets go. */
const heldMs = 10_000

export const whileHeld = <A, B, E1, E2, R1, R2>(
  what: string,
  first: Effect.Effect<A, E1, R1>,
  second: Effect.Effect<B, E2, R2>
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const secondAlone = Effect.gen(function* () {
      yield* sql`SET LOCAL lock_timeout = '5s'`
      return yield* second
    }).pipe(
      sql.withTransaction,
      Effect.catchCause((cause) => Effect.succeed(`the second ${what} failed: ${cause}`))
    )
    const { held, result } = yield* whileHolding(first, secondAlone, heldMs)
    return { first: held, second: result }
  })
