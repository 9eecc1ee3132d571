/**
 * Group commit: each caller hands in one item and waits for its own result, while one fiber runs
 * every item that gathered since its previous run as one set (one statement, one round trip, one
 * lock of each row it touches). Under low load a set is a single item with no added wait; under
 * load sets grow by themselves while the previous one runs, up to `maxSize`. A slow caller delays
 * only itself: sets hold what has arrived, never wait for what has not.
 *
 * One bad item never fails its neighbours: a set that fails for any reason but a transient one
 * (the database unreachable, a deadlock) is run again item by item, so only the offending item's
 * caller gets the failure. A transient failure is retried with backoff when `retryWhile` says so,
 * logged once per outage.
 */
import { Cause, Deferred, Duration, Effect, Exit, Queue, Schedule } from "effect"
import type * as Arr from "effect/Array"
import type { Scope } from "effect"
import { makeOutageLog } from "../observability/RecurringLogs.ts"
import { isDatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { isTransient } from "./SqlErrors.ts"

export interface GroupCommitOptions<A, B, E, R> {
  /** For logs. */
  readonly name: string
  /** Most items in one set. */
  readonly maxSize: number
  /** Runs one set; returns one result per item, in the same order. */
  readonly runSet: (items: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E, R>
  /**
   * Whether a failed set is run again (after a capped backoff) instead of failing its callers:
   * for transient failures such as a database outage or a deadlock, so that what the callers
   * handed in is never dropped while the process lives.
   */
  readonly retryWhile?: (error: E) => boolean
}

/** Backoff between runs of a failed set: 50 ms doubling, at most 2 s. */
const retrySchedule = Schedule.min([Schedule.exponential(Duration.millis(50)), Schedule.spaced(Duration.seconds(2))])

type Entry<A, B, E> = readonly [A, Deferred.Deferred<B, E>]

/**
 * Whether a set's failure is one no item caused, so running its items one by one would only
 * repeat it: the database unavailable, as the stores report it (DatabaseUnavailable) or as a
 * statement run outside them does (a connection SqlError, a deadlock).
 */
const isSetWide = (failure: unknown): boolean => isDatabaseUnavailable(failure) || isTransient(failure)

/**
 * Starts the set runner in the current scope and returns the function callers use. A set being
 * run is finished even when the scope closes, so a caller that handed in an item gets its answer.
 */
export const makeGroupCommit = <A, B, E, R>(
  options: GroupCommitOptions<A, B, E, R>
): Effect.Effect<(item: A) => Effect.Effect<B, E>, never, Scope.Scope | R> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Entry<A, B, E>>()
    const retryWhile = options.retryWhile
    const outage = makeOutageLog()
    const runOnce = (items: Arr.NonEmptyReadonlyArray<A>) =>
      (retryWhile === undefined
        ? options.runSet(items)
        : options.runSet(items).pipe(
            Effect.tapError((e) =>
              retryWhile(e) ? outage.failed(`${options.name}: set failed, running it again`, e) : Effect.void
            ),
            Effect.retry({ while: retryWhile, schedule: retrySchedule })
          )
      ).pipe(Effect.tap(() => outage.succeeded(`${options.name}: sets commit again`)))

    const settle = (entries: ReadonlyArray<Entry<A, B, E>>, exit: Exit.Exit<ReadonlyArray<B>, E>) => {
      if (Exit.isSuccess(exit)) {
        for (const [i, [, deferred]] of entries.entries())
          Deferred.doneUnsafe<B, E>(deferred, Exit.succeed(exit.value[i] as B))
      } else for (const [, deferred] of entries) Deferred.doneUnsafe<B, E>(deferred, Exit.failCause(exit.cause))
    }

    // the wait for items can be interrupted (shutdown); a set, once taken, is run to its end
    const runTaken = (batch: Arr.NonEmptyReadonlyArray<Entry<A, B, E>>) =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(runOnce(batch.map(([item]) => item) as unknown as Arr.NonEmptyReadonlyArray<A>))
        const isolate =
          Exit.isFailure(exit) &&
          batch.length > 1 &&
          !Cause.hasInterruptsOnly(exit.cause) &&
          !isSetWide(Cause.squash(exit.cause))
        if (!isolate) return settle(batch, exit)
        yield* Effect.logWarning(`${options.name}: a set failed; running its items one by one`, exit.cause)
        for (const entry of batch) settle([entry], yield* Effect.exit(runOnce([entry[0]])))
      }).pipe(Effect.uninterruptible)

    const worker: Effect.Effect<never, never, R> = Queue.takeBetween(queue, 1, options.maxSize).pipe(
      Effect.flatMap((batch) => runTaken(batch as unknown as Arr.NonEmptyReadonlyArray<Entry<A, B, E>>)),
      Effect.forever
    )
    yield* Effect.forkScoped(worker)
    return (item: A) =>
      Effect.flatMap(Deferred.make<B, E>(), (deferred) =>
        Queue.offer(queue, [item, deferred] as const).pipe(Effect.andThen(Deferred.await(deferred)))
      )
  })
