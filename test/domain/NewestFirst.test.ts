/** Newest-first pages (organisations, an organisation's messages and batches): cursors and pages. */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { decodeListCursor, encodeListCursor, pageOf, positionAfter } from "../../src/domain/NewestFirst.ts"

const id = "0b9e3a52-3c1e-4f5c-9a57-1f2e3d4c5b6a"
const at = new Date("2026-01-10T12:34:56.789Z")
const raw = (payload: string) => Buffer.from(payload, "utf8").toString("base64url")

describe("list cursors", () => {
  it("encode the row's created_at and id, and decode back to them", () => {
    const cursor = encodeListCursor({ createdAt: at, id })
    expect(Buffer.from(cursor, "base64url").toString("utf8")).toBe(`2026-01-10T12:34:56.789Z|${id}`)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeListCursor(cursor)).toEqual({ createdAt: at, id })
    expect(decodeListCursor(raw(`2026-01-10T12:34:56.789Z|${id.toUpperCase()}`))).toEqual({
      createdAt: at,
      id: id.toUpperCase()
    })
  })

  it.each([
    ["not base64 of a cursor", "!!!"],
    ["empty", ""],
    ["no separator", raw(`2026-01-10T12:34:56.789Z${id}`)],
    ["id not a uuid", raw("2026-01-10T12:34:56.789Z|42")],
    ["id with more after it", raw(`2026-01-10T12:34:56.789Z|${id}x`)],
    ["id followed by a new line", raw(`2026-01-10T12:34:56.789Z|${id}\nx`)],
    ["no id", raw("2026-01-10T12:34:56.789Z|")],
    ["something before the instant", raw(`x2026-01-10T12:34:56.789Z|${id}`)],
    ["instant without milliseconds", raw(`2026-01-10T12:34:56Z|${id}`)],
    ["instant with an offset", raw(`2026-01-10T12:34:56.789+00:00|${id}`)],
    ["instant that does not exist", raw(`2026-13-45T12:34:56.789Z|${id}`)],
    ["letters for digits", raw(`2026-01-1aT12:34:56.789Z|${id}`)]
  ])("refuse %s", (_name, cursor) => {
    expect(decodeListCursor(cursor)).toBeUndefined()
  })
})

describe("pageOf", () => {
  const rows = [0, 1, 2].map((i) => ({ createdAt: new Date(at.getTime() - i), id: `${id.slice(0, -1)}${i}` }))

  it("with one row more than the page: the page, and the cursor of its last row", () => {
    expect(pageOf(rows, 2)).toEqual({ rows: rows.slice(0, 2), nextCursor: encodeListCursor(rows[1]!) })
  })

  it("the last page (as many rows as the limit, or fewer) has no cursor", () => {
    expect(pageOf(rows, 3)).toEqual({ rows, nextCursor: undefined })
    expect(pageOf(rows, 5)).toEqual({ rows, nextCursor: undefined })
    expect(pageOf([], 5)).toEqual({ rows: [], nextCursor: undefined })
    expect(pageOf(rows, 0)).toEqual({ rows: [], nextCursor: undefined })
  })
})

describe("positionAfter", () => {
  it("no cursor: the first page; a cursor: its position; anything else: 400 invalid_cursor", () => {
    expect(Effect.runSync(positionAfter(undefined))).toBeUndefined()
    expect(Effect.runSync(positionAfter(encodeListCursor({ createdAt: at, id })))).toEqual({ createdAt: at, id })
    const failed = Effect.runSyncExit(Effect.flip(positionAfter("bogus")))
    expect(Exit.isSuccess(failed)).toBe(true)
    const error = Exit.isSuccess(failed) ? failed.value : undefined
    expect(error?._tag).toBe("InvalidCursor")
    expect(error?.error.message).toBe(
      "The cursor is not a next_cursor of this list; use it unchanged or restart from the first page"
    )
  })
})
