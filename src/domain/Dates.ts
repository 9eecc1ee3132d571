/** Calendar dates (`YYYY-MM-DD`, UTC) used by credit expiry and contact birthdays. */
import { Schema } from "effect"

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/

/** True when `s` is `YYYY-MM-DD` and names a day that exists (no 2023-02-30). */
export const isCalendarDate = (s: string): boolean => {
  const m = datePattern.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const date = new Date(Date.UTC(y, mo - 1, d))
  // a day past its month's end lands in another month, on another day number: either check alone refuses it
  return date.getUTCFullYear() === y &&
    // Stryker disable next-line ConditionalExpression: equivalent, the day check refuses what this one would
    date.getUTCMonth() === mo - 1 &&
    // Stryker disable next-line ConditionalExpression: equivalent, the month check refuses what this one would
    date.getUTCDate() === d
}

/** A calendar date string, `YYYY-MM-DD`. */
export const CalendarDate = Schema.String.check(
  Schema.makeFilter((s: string) => isCalendarDate(s) || "must be a calendar date YYYY-MM-DD", {
    toJsonSchema: () => ({ format: "date" })
  })
)

/** The UTC calendar day of an instant given in epoch milliseconds. */
export const utcDay = (epochMillis: number): string => new Date(epochMillis).toISOString().slice(0, 10)
