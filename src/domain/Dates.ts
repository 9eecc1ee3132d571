/** Calendar dates (`YYYY-MM-DD`, UTC) used by credit expiry and contact birthdays. */
import { Schema } from "effect"

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/

/**
 * True when `s` is `YYYY-MM-DD` and names a day that exists (no 2023-02-30), in years 0001 to
 * 9999 (PostgreSQL's `date` has no year 0: the year before 0001 is 1 BC).
 */
export const isCalendarDate = (s: string): boolean => {
  const m = datePattern.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (y === 0) return false
  // setUTCFullYear, not Date.UTC, which reads years 0 to 99 as 1900 to 1999
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  // day 00 or a day past its month's end lands in another month (at most 99 days on: never a year),
  // and so does month 00 or a month past 12: the month alone tells
  return date.getUTCMonth() === mo - 1
}

/** A calendar date string, `YYYY-MM-DD`. */
export const CalendarDate = Schema.String.check(
  Schema.makeFilter((s: string) => isCalendarDate(s) || "must be a calendar date YYYY-MM-DD", {
    toJsonSchema: () => ({ format: "date" })
  })
)

/** The UTC calendar day of an instant given in epoch milliseconds. */
export const utcDay = (epochMillis: number): string => new Date(epochMillis).toISOString().slice(0, 10)
