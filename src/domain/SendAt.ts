import { isCalendarDate } from "./Dates.ts"

/** `send_at` rules (spec 2.3, 4.3): RFC 3339 with an explicit offset, strictly in the future at initial admission. */

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/
const localTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/

export type SendAtCheck =
  | { readonly ok: true; readonly at: Date }
  /** not a timestamp at all: a validation error */
  | { readonly ok: false; readonly problem: "format"; readonly message: string }
  /** a timestamp that breaks the scheduling rule: invalid_schedule */
  | { readonly ok: false; readonly problem: "schedule"; readonly message: string }

/** Checks the syntax of `value`: RFC 3339 with an explicit offset (the future rule is `isFuture`). */
export const checkSendAt = (value: string): SendAtCheck => {
  const m = rfc3339.exec(value)
  if (m === null) {
    return localTime.test(value)
      ? { ok: false, problem: "schedule", message: "send_at must carry an explicit timezone offset (Z or ±hh:mm)" }
      : { ok: false, problem: "format", message: "must be an RFC 3339 date-time with a timezone offset" }
  }
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])]
  const at = new Date(value)
  if (Number.isNaN(at.getTime()) || !isCalendarDate(value.slice(0, 10)) || h > 23 || mi > 59 || s > 59) {
    return { ok: false, problem: "format", message: "must be an RFC 3339 date-time with a timezone offset" }
  }
  return { ok: true, at }
}

/**
 * True when `at` is in the future of `nowMs`. Judged at initial admission only, after the
 * idempotency lookup: the replay of a scheduled creation is valid once its time has passed.
 */
export const isFuture = (at: Date, nowMs: number): boolean => at.getTime() > nowMs
