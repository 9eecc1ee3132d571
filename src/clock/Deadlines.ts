/**
 * Many calls, each bounded by the same deadline, at the cost of one fiber a call. The library's
 * `Effect.timeoutOrElse` races every call against a sleep of its own: two fibers and a timer a
 * call, a fifth of the dispatcher's CPU for each dispatched message (bench/HISTORY.md). Here a
 * call runs in one child fiber, and one sweeper wakes on the Clock at the earliest deadline and
 * interrupts the calls that outlived it; every call has the same duration, so their deadlines
 * fall in the order the calls started. Time is the Clock's, as `timeoutOrElse`'s: the service's
 * test clock moves it.
 */
import { Clock, Duration, Effect, Exit, Fiber, Queue, type Scope } from "effect"

interface Running {
  readonly deadline: number
  /** The call's fiber until it ends (then let go, so that what it answered is not kept). */
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  timedOut: boolean
}

/** How many ended calls the list keeps at its start before it is cut (calls mostly end in the order they started). */
const compactAfter = 1_024

export interface Deadlines {
  /** `effect`, or `orElse()` when it has not ended `durationMs` after it started (it is interrupted then). */
  readonly bounded: <A, E, R>(effect: Effect.Effect<A, E, R>, orElse: () => A) => Effect.Effect<A, E, R>
}

/** The calls of one bound (`durationMs`), swept by a fiber of the current scope. */
export const makeDeadlines = (durationMs: number): Effect.Effect<Deadlines, never, Scope.Scope> =>
  Effect.gen(function* () {
    const running: Array<Running> = []
    let head = 0
    const started = yield* Queue.sliding<true>(1)

    const skipEnded = () => {
      while (head < running.length && running[head]!.fiber === undefined) head++
      if (head > compactAfter) {
        running.splice(0, head)
        head = 0
      }
    }

    const sweep = Effect.gen(function* () {
      skipEnded()
      const first = running[head]
      if (first === undefined) return yield* Effect.asVoid(Queue.take(started))
      const now = yield* Clock.currentTimeMillis
      if (first.deadline > now) return yield* Effect.sleep(Duration.millis(first.deadline - now))
      first.timedOut = true
      first.fiber!.interruptUnsafe()
      first.fiber = undefined
    })
    yield* Effect.forkScoped(Effect.forever(sweep))

    return {
      bounded: <A, E, R>(effect: Effect.Effect<A, E, R>, orElse: () => A) =>
        Effect.gen(function* () {
          // started at once, as a race starts its sides: no hop through the scheduler
          const fiber = yield* Effect.forkChild(effect, { startImmediately: true })
          const call: Running = { deadline: (yield* Clock.currentTimeMillis) + durationMs, fiber, timedOut: false }
          running.push(call)
          if (running.length - head === 1) yield* Queue.offer(started, true)
          const exit = yield* Fiber.await(fiber)
          call.fiber = undefined
          skipEnded()
          return call.timedOut && Exit.isFailure(exit) ? orElse() : yield* exit
        })
    }
  })
