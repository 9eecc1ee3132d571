/** Calendar dates (YYYY-MM-DD, UTC) of credit expiry and contact birthdays. */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { CalendarDate, isCalendarDate, utcDay } from "../../src/domain/Dates.ts"

describe("isCalendarDate", () => {
  it.each([
    "2024-02-29",
    "2023-12-31",
    "2023-01-01",
    "2023-04-30",
    "1900-03-01",
    "9999-12-31",
    "0001-01-01",
    "0050-06-15",
    "0004-02-29"
  ])("accepts %s", (s) => {
    expect(isCalendarDate(s)).toBe(true)
  })

  it.each([
    "2023-02-29",
    "2023-02-30",
    "2023-04-31",
    "2023-13-01",
    "2023-00-10",
    "2023-01-00",
    "2023-01-32",
    "2023-1-01",
    "2023-01-1",
    "23-01-01",
    "20230-01-01",
    "x2023-01-01",
    "2023-01-01x",
    "2023/01/01",
    "2023-01-01T00:00:00Z",
    "",
    "0000-01-01",
    "0000-02-29",
    "0001-02-29",
    "0099-02-29"
  ])("refuses %s", (s) => {
    expect(isCalendarDate(s)).toBe(false)
  })
})

describe("CalendarDate", () => {
  it("decodes a calendar date and refuses another string with a plain message", () => {
    expect(Schema.decodeUnknownSync(CalendarDate)("2024-02-29")).toBe("2024-02-29")
    expect(() => Schema.decodeUnknownSync(CalendarDate)("2023-02-29")).toThrow(/must be a calendar date YYYY-MM-DD/)
  })

  it("is a string of format date in JSON Schema", () => {
    expect(Schema.toJsonSchemaDocument(CalendarDate).schema).toEqual({ type: "string", format: "date" })
  })
})

describe("utcDay", () => {
  it("is the UTC calendar day of an instant", () => {
    expect(utcDay(Date.UTC(2026, 0, 10, 23, 59, 59, 999))).toBe("2026-01-10")
    expect(utcDay(Date.UTC(2026, 0, 11))).toBe("2026-01-11")
  })
})
