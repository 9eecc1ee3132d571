/** GET /admin/v1/clock and POST /admin/v1/clock/advance (contract section 9). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { ServiceClock } from "../clock/ServiceClock.ts"
import { DueWork } from "../dispatch/DueWork.ts"
import { ClockNotTest, ValidationError } from "../domain/Errors.ts"
import { checkSendAt } from "../domain/SendAt.ts"
import { atBoundary } from "../db/Boundary.ts"
import { now } from "../Time.ts"
import { AdminApi } from "./AdminApi.ts"

const invalid = (field: string, message: string) =>
  ValidationError.withMessage("Invalid clock advance", { details: [{ field, message }] })

/** The instant an advance request asks for, or why it is refused. */
const targetOf = (payload: { readonly seconds?: number; readonly to?: string }, from: Date) => {
  if ((payload.seconds === undefined) === (payload.to === undefined)) {
    return Effect.fail(invalid("body", "give exactly one of seconds or to"))
  }
  if (payload.seconds !== undefined) {
    return payload.seconds > 0
      ? Effect.succeed(new Date(from.getTime() + Math.round(payload.seconds * 1000)))
      : Effect.fail(invalid("seconds", "must be greater than 0"))
  }
  const to = checkSendAt(payload.to!)
  if (!to.ok) return Effect.fail(invalid("to", "must be an RFC 3339 date-time with a timezone offset"))
  return to.at.getTime() >= from.getTime() ? Effect.succeed(to.at) : Effect.fail(invalid("to", "must not be before the clock's now"))
}

export const ClockHandlers = HttpApiBuilder.group(AdminApi, "clock", Effect.fn(function*(handlers) {
  const clock = yield* ServiceClock
  const work = yield* atBoundary(DueWork)
  return handlers
    .handle("get", () => Effect.map(now, (at) => ({ now: at.toISOString(), mode: clock.mode })))
    .handle("advance", ({ payload }) =>
      Effect.gen(function*() {
        if (clock.mode !== "test") {
          return yield* ClockNotTest.withMessage("The clock can only be advanced when the service runs with SMS_CLOCK=test")
        }
        const to = yield* targetOf(payload, yield* now)
        yield* work.advanceTo(to)
        return { now: (yield* now).toISOString() }
      }))
}))
