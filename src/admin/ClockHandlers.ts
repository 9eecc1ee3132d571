/** GET /admin/v1/clock and POST /admin/v1/clock/advance (docs/decisions.md#the-test-clock). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ServiceClock } from "../clock/ServiceClock.ts"
import { DueWork } from "../dispatch/DueWork.ts"
import { ClockNotTest, ValidationError } from "../domain/Errors.ts"
import { checkSendAt } from "../domain/SendAt.ts"
import { now } from "../clock/Time.ts"
import { AdminApi } from "./AdminApi.ts"

const invalid = (field: string, message: string) =>
  ValidationError.withMessage("Invalid clock advance", { details: [{ field, message }] })

/**
 * The latest instant the clock may be moved to: a day before the last one a four-digit year can
 * write. Every time the service derives from its clock (receipt, verification and lease delays,
 * minutes at most) must still be an RFC 3339 timestamp PostgreSQL can store; past year 9999
 * every request that writes a time failed with a 500.
 */
const latestClock = Date.parse("9999-12-31T00:00:00Z")
const tooLate = `must not move the clock past ${new Date(latestClock).toISOString()}`

/** The instant an advance request asks for, or why it is refused. */
const targetOf = (payload: { readonly seconds?: number; readonly to?: string }, from: Date) => {
  if ((payload.seconds === undefined) === (payload.to === undefined)) {
    return Effect.fail(invalid("body", "give exactly one of seconds or to"))
  }
  if (payload.seconds !== undefined) {
    if (payload.seconds <= 0) return Effect.fail(invalid("seconds", "must be greater than 0"))
    const target = from.getTime() + Math.round(payload.seconds * 1000)
    return target <= latestClock ? Effect.succeed(new Date(target)) : Effect.fail(invalid("seconds", tooLate))
  }
  const to = checkSendAt(payload.to!)
  if (!to.ok) return Effect.fail(invalid("to", to.message))
  if (to.at.getTime() < from.getTime()) return Effect.fail(invalid("to", "must not be before the clock's now"))
  return to.at.getTime() <= latestClock ? Effect.succeed(to.at) : Effect.fail(invalid("to", tooLate))
}

export const ClockHandlers = HttpApiBuilder.group(
  AdminApi,
  "clock",
  Effect.fn(function* (handlers) {
    const clock = yield* ServiceClock
    const work = yield* DueWork
    return handlers
      .handle("get", () => Effect.map(now, (at) => ({ now: at.toISOString(), mode: clock.mode })))
      .handle("advance", ({ payload }) =>
        Effect.gen(function* () {
          if (clock.mode !== "test") {
            return yield* ClockNotTest.withMessage(
              "The clock can only be advanced when the service runs with SMS_CLOCK=test"
            )
          }
          const to = yield* targetOf(payload, yield* now)
          yield* work.advanceTo(to)
          return { now: (yield* now).toISOString() }
        })
      )
  })
)
