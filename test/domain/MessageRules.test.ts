/** The rules of a message creation beyond its JSON shape: text length, sender syntax, send_at, keys, recipients. */
import { describe, expect, it } from "vitest"
import {
  checkContent,
  checkDistinctRecipients,
  idempotencyKeyPattern,
  requireFuture
} from "../../src/domain/MessageRules.ts"
import { countSegments, describeSegments } from "../../src/domain/Segments.ts"

const asJson = (x: unknown) => JSON.parse(JSON.stringify(x))

describe("checkContent", () => {
  it("passes a text of one or two segments with its count, and no send_at as null", () => {
    expect(checkContent({ text: "Salama" })).toEqual({ segments: 1, sendAt: null })
    expect(checkContent({ text: "a".repeat(306) })).toEqual({ segments: 2, sendAt: null })
  })

  it("refuses a text of three segments: 400 validation_error naming text with its count", () => {
    const text = "a".repeat(307)
    const result = checkContent({ text })
    expect(result).toMatchObject({ _tag: "ValidationError" })
    expect(asJson(result)).toEqual({
      error: {
        code: "validation_error",
        message: "The text is longer than two SMS segments",
        details: [{ field: "text", message: describeSegments(countSegments(text)) }]
      }
    })
  })

  it("checks the sender name only when given: 400 invalid_sender_name naming sender_name", () => {
    expect(checkContent({ text: "x", sender_name: "INFO 2" })).toEqual({ segments: 1, sendAt: null })
    const result = checkContent({ text: "x", sender_name: "TWELVE CHARS" })
    expect(result).toMatchObject({ _tag: "InvalidSenderName" })
    expect(asJson(result)).toEqual({
      error: {
        code: "invalid_sender_name",
        message: "sender_name must be 1 to 11 ASCII letters, digits or internal spaces",
        details: [{ field: "sender_name", message: "must be 1 to 11 ASCII letters, digits or internal spaces" }]
      }
    })
  })

  it("reads a valid send_at as its instant, and refuses an invalid one naming send_at", () => {
    expect(checkContent({ text: "x", send_at: "2026-01-10T15:00:00+03:00" })).toEqual({
      segments: 1,
      sendAt: new Date("2026-01-10T12:00:00Z")
    })
    const result = checkContent({ text: "x", send_at: "2026-01-10T15:00:00" })
    expect(result).toMatchObject({ _tag: "ValidationError" })
    expect(asJson(result)).toEqual({
      error: {
        code: "validation_error",
        message: "send_at is not a valid timestamp",
        details: [{ field: "send_at", message: "must carry an explicit timezone offset (Z or ±hh:mm)" }]
      }
    })
  })
})

describe("requireFuture", () => {
  const now = new Date("2026-01-10T12:00:00.000Z")
  it("accepts no send_at and a send_at after now", () => {
    expect(requireFuture(null, now)).toBeUndefined()
    expect(requireFuture(new Date(now.getTime() + 1), now)).toBeUndefined()
  })

  it("refuses now itself and the past: 400 invalid_schedule naming send_at", () => {
    for (const at of [now, new Date(now.getTime() - 1)]) {
      expect(asJson(requireFuture(at, now))).toEqual({
        error: {
          code: "invalid_schedule",
          message: "send_at must be in the future",
          details: [{ field: "send_at", message: "must be in the future" }]
        }
      })
    }
  })
})

describe("idempotencyKeyPattern", () => {
  it.each(["a", "!", "~", "order-1234-sms", "x".repeat(128), "A0_.:/+="])("accepts %j", (key) => {
    expect(idempotencyKeyPattern.test(key)).toBe(true)
  })
  it.each(["", "x".repeat(129), "a b", " a", "a\t", "é", "a\u007f", "line\nbreak"])("refuses %j", (key) => {
    expect(idempotencyKeyPattern.test(key)).toBe(false)
  })
})

describe("checkDistinctRecipients", () => {
  it("accepts distinct recipients (and none)", () => {
    expect(checkDistinctRecipients(["+261340000001", "+261340000002"])).toBeUndefined()
    expect(checkDistinctRecipients([])).toBeUndefined()
  })

  it("names each repeat with the position it repeats", () => {
    const a = "+261340000001"
    const b = "+261340000002"
    expect(asJson(checkDistinctRecipients([a, b, a, b, a]))).toEqual({
      error: {
        code: "validation_error",
        message: "recipients must be distinct; duplicates are rejected, not removed",
        details: [
          { field: "recipients.2", message: "duplicate of recipients.0" },
          { field: "recipients.3", message: "duplicate of recipients.1" },
          { field: "recipients.4", message: "duplicate of recipients.0" }
        ]
      }
    })
  })
})
