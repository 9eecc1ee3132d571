/**
 * Deadlines (src/clock/Deadlines.ts) under a TestClock: each call gets its own answer when it ends
 * in time, and `orElse` (the call interrupted) once it outlives its deadline, whatever the other
 * calls do; a failure in time is the call's own; a caller interrupted takes its call with it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeDeadlines } from "../../src/clock/Deadlines.ts"

/** A call that answers `value` after `ms`, and says whether it was interrupted. */
const call = (value: string, ms: number, interrupted: Array<string>) =>
  Effect.sleep(`${ms} millis`).pipe(
    Effect.as(value),
    Effect.onInterrupt(() => Effect.sync(() => void interrupted.push(value)))
  )

describe("Deadlines", () => {
  it.effect(
    "a call that ends in time gets its answer; one that outlives its deadline is interrupted and gets orElse, each on its own",
    () =>
      Effect.gen(function* () {
        const deadlines = yield* makeDeadlines(1_000)
        const interrupted: Array<string> = []
        const fast = yield* Effect.forkChild(deadlines.bounded(call("fast", 100, interrupted), () => "late"))
        const slow = yield* Effect.forkChild(deadlines.bounded(call("slow", 5_000, interrupted), () => "late"))
        yield* TestClock.adjust("500 millis")
        // a call started later has a later deadline
        const later = yield* Effect.forkChild(deadlines.bounded(call("later", 900, interrupted), () => "late"))
        yield* TestClock.adjust("500 millis")
        expect(yield* Fiber.join(fast)).toBe("fast")
        expect(yield* Fiber.join(slow)).toBe("late")
        expect(interrupted).toEqual(["slow"])
        yield* TestClock.adjust("400 millis")
        expect(yield* Fiber.join(later)).toBe("later")
        expect(interrupted).toEqual(["slow"])
      })
  )

  it.effect("a call that fails in time fails with its own error", () =>
    Effect.gen(function* () {
      const deadlines = yield* makeDeadlines(1_000)
      const exit = yield* Effect.exit(deadlines.bounded(Effect.fail("refused"), () => "late"))
      expect(exit).toEqual(Exit.fail("refused"))
    })
  )

  it.effect("calls after an idle time are bounded again (the sweeper waits for the next one)", () =>
    Effect.gen(function* () {
      const deadlines = yield* makeDeadlines(1_000)
      expect(yield* deadlines.bounded(Effect.succeed("at once"), () => "late")).toBe("at once")
      yield* TestClock.adjust("10 seconds")
      const stuck = yield* Effect.forkChild(deadlines.bounded(Effect.never, () => "late"))
      yield* TestClock.adjust("999 millis")
      expect(stuck.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(stuck)).toBe("late")
    })
  )

  it.effect("a caller interrupted interrupts its call", () =>
    Effect.gen(function* () {
      const deadlines = yield* makeDeadlines(1_000)
      const interrupted: Array<string> = []
      const started = yield* Deferred.make<void>()
      const caller = yield* Effect.forkChild(
        deadlines.bounded(
          Deferred.succeed(started, undefined).pipe(Effect.andThen(call("abandoned", 5_000, interrupted))),
          () => "late"
        )
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(caller)
      expect(interrupted).toEqual(["abandoned"])
    })
  )
})
