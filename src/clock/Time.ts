/** The current instant and UTC day, read from Effect's Clock so TestClock drives them in tests. */
import { Clock, Effect } from "effect"
import { utcDay } from "../domain/Dates.ts"

/** Now, as a Date. */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** Today's UTC date, `YYYY-MM-DD`: the day credit expiry is judged against. */
export const today: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, utcDay)

/**
 * The real time, as a Date, whatever the service's clock says: for what a party outside the
 * service checks against its own clock (a webhook's `webhook-timestamp`, which receivers hold to
 * a few minutes of theirs), never for what the service judges (docs/decisions.md#the-test-clock).
 */
export const wallClock: Effect.Effect<Date> = Effect.sync(() => new Date())
