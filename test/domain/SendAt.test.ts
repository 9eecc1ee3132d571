/** send_at (docs/integrators.md#messages): RFC 3339 with an explicit offset; in the future at initial admission. */
import { describe, expect, it } from "vitest"
import { checkSendAt, isFuture } from "../../src/domain/SendAt.ts"

const notTimestamp = { ok: false, message: "must be an RFC 3339 date-time with a timezone offset" }
const noOffset = { ok: false, message: "must carry an explicit timezone offset (Z or ±hh:mm)" }

describe("checkSendAt", () => {
  it.each([
    ["2026-01-10T12:00:00Z", "2026-01-10T12:00:00.000Z"],
    ["2026-01-10t12:00:00z", "2026-01-10T12:00:00.000Z"],
    ["2026-01-10T15:00:00+03:00", "2026-01-10T12:00:00.000Z"],
    ["2026-01-10T06:30:00-05:30", "2026-01-10T12:00:00.000Z"],
    ["2026-01-10T12:00:00.5Z", "2026-01-10T12:00:00.500Z"],
    ["2026-01-10T12:00:00.123456789Z", "2026-01-10T12:00:00.123Z"],
    ["2024-02-29T23:59:59Z", "2024-02-29T23:59:59.000Z"],
    ["2026-01-10T00:00:00Z", "2026-01-10T00:00:00.000Z"]
  ])("reads %s as %s", (value, instant) => {
    expect(checkSendAt(value)).toEqual({ ok: true, at: new Date(instant) })
  })

  it.each([
    "2026-01-10T12:00:00",
    "2026-01-10t12:00",
    "2026-01-10 12:00:00",
    "2026-01-10T12:00:00.25",
    "2026-01-10 12:00"
  ])("names the missing offset of the local time %s", (value) => {
    expect(checkSendAt(value)).toEqual(noOffset)
  })

  it.each([
    "",
    "tomorrow",
    "2026-01-10",
    "2026-01-10T12",
    "2026-01-10T12:00Z",
    "2026-01-10 12:00:00Z",
    "2026-01-10T12:00:00+0300",
    "2026-01-10T12:00:00+03",
    "2026-01-10T12:00:00.Z",
    "2026-01-10T12:00:00.1234567890Z",
    "x2026-01-10T12:00:00Z",
    "2026-01-10T12:00:00Zx",
    "2026-1-10T12:00:00Z",
    "2026-01-10T12:00:00 Z",
    "2026-01-10T12:00:00.12a",
    "2026-02-30T12:00:00Z",
    "2026-13-01T12:00:00Z",
    "2026-01-10T24:00:00Z",
    "2026-01-10T23:60:00Z",
    "2026-01-10T23:59:60Z",
    "2026-01-10T12:00:00+24:00",
    "x2026-01-10T12:00:00",
    "2026-01-10T12:00:00.123"
  ])("refuses %j as not a timestamp (or a local time without offset)", (value) => {
    const result = checkSendAt(value)
    expect(result.ok).toBe(false)
    if (value === "2026-01-10T12:00:00.123") expect(result).toEqual(noOffset)
    else expect(result).toEqual(notTimestamp)
  })
})

describe("checkSendAt near the year 10000", () => {
  it("reads the last instant of 9999 in UTC, whatever the offset that writes it", () => {
    expect(checkSendAt("9999-12-31T23:59:59.999Z")).toEqual({ ok: true, at: new Date("9999-12-31T23:59:59.999Z") })
    expect(checkSendAt("9999-12-31T20:59:59+03:00")).toEqual({ ok: true, at: new Date("9999-12-31T17:59:59.000Z") })
  })

  it.each(["9999-12-31T23:59:59-00:01", "9999-12-31T23:59:59-23:59", "9999-12-31T22:00:00.001-02:00"])(
    "refuses %s, which falls in the year 10000 in UTC",
    (value) => {
      expect(checkSendAt(value)).toEqual({ ok: false, message: "must be at most 9999-12-31T23:59:59Z in UTC" })
    }
  )
})

describe("isFuture", () => {
  it("is strictly after now", () => {
    const at = new Date("2026-01-10T12:00:00.000Z")
    expect(isFuture(at, at.getTime() - 1)).toBe(true)
    expect(isFuture(at, at.getTime())).toBe(false)
    expect(isFuture(at, at.getTime() + 1)).toBe(false)
  })
})
