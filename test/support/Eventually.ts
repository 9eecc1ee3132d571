/** A bounded poll in real time, for tests of the background fibers on the system clock. */
import { Effect } from "effect"

export interface EventuallyOptions {
  readonly timeoutMs?: number
  readonly intervalMs?: number
  readonly what?: string
}

/**
 * Runs `read` until `done` holds; dies with the last value read after `timeoutMs` of real time
 * (the in-process tests' form: `read` is an Effect against the app).
 */
export const eventuallyEffect = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  done: (a: A) => boolean,
  options: EventuallyOptions = {}
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const deadline = Date.now() + (options.timeoutMs ?? 10_000)
    for (;;) {
      const value = yield* read
      if (done(value)) return value
      if (Date.now() > deadline) {
        return yield* Effect.die(
          new Error(
            `${options.what ?? "condition"} not reached in ${options.timeoutMs ?? 10_000} ms; last: ${JSON.stringify(value)}`
          )
        )
      }
      yield* Effect.sleep(options.intervalMs ?? 50)
    }
  })

/** Reads until `done` holds; fails with the last value read after `timeoutMs` of real time. */
export const eventually = <A>(
  read: () => Promise<A>,
  done: (a: A) => boolean,
  options: EventuallyOptions = {}
): Promise<A> =>
  Effect.runPromise(
    eventuallyEffect(
      Effect.promise(() => read()),
      done,
      options
    )
  )
