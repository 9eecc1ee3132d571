/**
 * Group commit: each caller hands in one item and waits for its own result, while one fiber runs
 * every item that gathered since its previous run as one set (one statement, one round trip, one
 * lock of each row it touches). Under low load a set is a single item with no added wait; under
 * load sets grow by themselves while the previous one runs, up to `maxSize`. A slow caller delays
 * only itself: sets hold what has arrived, never wait for what has not.
 */
import { Cause, Deferred, Duration, Effect, Exit, Queue, Schedule } from "effect"
import type * as Arr from "effect/Array"
import type { Scope } from "effect"

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

/**
 * Starts the set runner in the current scope and returns the function callers use. A set being
 * run is finished even when the scope closes, so a caller that handed in an item gets its answer.
 */
export const makeGroupCommit = <A, B, E, R>(
  options: GroupCommitOptions<A, B, E, R>
): Effect.Effect<(item: A) => Effect.Effect<B, E>, never, Scope.Scope | R> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<readonly [A, Deferred.Deferred<B, E>]>()
    const retryWhile = options.retryWhile
    const runOnce = (items: Arr.NonEmptyReadonlyArray<A>) =>
      retryWhile === undefined
        ? options.runSet(items)
        : options.runSet(items).pipe(
          Effect.tapError((e) =>
            retryWhile(e) ? Effect.logWarning(`${options.name}: set failed, running it again`, e) : Effect.void),
          Effect.retry({ while: retryWhile, schedule: retrySchedule })
        )
    // the wait for items can be interrupted (shutdown); a set, once taken, is run to its end
    const runTaken = (batch: ReadonlyArray<readonly [A, Deferred.Deferred<B, E>]>) =>
      Effect.gen(function*() {
        const items = batch.map(([item]) => item) as unknown as Arr.NonEmptyReadonlyArray<A>
        const exit = yield* Effect.exit(runOnce(items))
        if (Exit.isSuccess(exit)) {
          batch.forEach(([, deferred], i) => Deferred.doneUnsafe<B, E>(deferred, Exit.succeed(exit.value[i] as B)))
        } else {
          if (!Cause.hasInterruptsOnly(exit.cause)) yield* Effect.logError(`${options.name}: set failed`, exit.cause)
          for (const [, deferred] of batch) Deferred.doneUnsafe<B, E>(deferred, Exit.failCause(exit.cause))
        }
      }).pipe(Effect.uninterruptible)
    const worker: Effect.Effect<never, never, R> = Queue.takeBetween(queue, 1, options.maxSize).pipe(
      Effect.flatMap(runTaken),
      Effect.forever
    )
    yield* Effect.forkScoped(worker)
    return (item: A) =>
      Effect.flatMap(Deferred.make<B, E>(), (deferred) =>
        Queue.offer(queue, [item, deferred] as const).pipe(Effect.andThen(Deferred.await(deferred))))
  })
