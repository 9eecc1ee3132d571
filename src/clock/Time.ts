/** The current instant and UTC day, read from Effect's Clock so TestClock drives them in tests. */
import { Clock, Effect } from "effect"
import { utcDay } from "../domain/Dates.ts"

/** Now, as a Date. */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** Today's UTC date, `YYYY-MM-DD`: the day credit expiry is judged against. */
export const today: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, utcDay)
