import { isCalendarDate } from "./Dates.ts"

/** `send_at` rules (docs/integrators.md#messages): RFC 3339 with an explicit offset, strictly in the future at initial admission. */

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/
const localTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/

/** The instant, or why `send_at` is not a valid timestamp (a validation error naming `send_at`). */
export type SendAtCheck = { readonly ok: true; readonly at: Date } | { readonly ok: false; readonly message: string }

const notTimestamp = "must be an RFC 3339 date-time with a timezone offset"

/** The last instant a four-digit year can write in UTC: a later one could not be echoed in RFC 3339. */
const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
const tooLate = "must be at most 9999-12-31T23:59:59Z in UTC"

/**
 * Checks the syntax of `value`: RFC 3339 with an explicit offset. A local time without an offset
 * is malformed, not a scheduling problem: the spec keeps invalid_schedule for a time that is not
 * in the future (`isFuture`).
 */
export const checkSendAt = (value: string): SendAtCheck => {
  const m = rfc3339.exec(value)
  if (m === null) {
    return {
      ok: false,
      message: localTime.test(value) ? "must carry an explicit timezone offset (Z or ±hh:mm)" : notTimestamp
    }
  }
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])]
  const at = new Date(value)
  if (
    Number.isNaN(at.getTime()) ||
    !isCalendarDate(value.slice(0, 10)) ||
    h > 23 ||
    // Stryker disable next-line ConditionalExpression: equivalent, Date itself refuses minute 60 and second 60 (NaN above); the checks state the rule
    mi > 59 ||
    s > 59
  ) {
    return { ok: false, message: notTimestamp }
  }
  if (at.getTime() > latest) return { ok: false, message: tooLate }
  return { ok: true, at }
}

/**
 * True when `at` is in the future of `nowMs`. Judged at initial admission only, after the
 * idempotency lookup: the replay of a scheduled creation is valid once its time has passed.
 */
export const isFuture = (at: Date, nowMs: number): boolean => at.getTime() > nowMs
