/**
 * Time-ordered ids (src/platform/Ids.ts `uuidV7Source`, RFC 9562 version 7): the version and
 * variant bits, the time in the first 48 bits, and ids that increase in the order they were made,
 * within one millisecond (4,096 of them, then the next millisecond is borrowed) and when the time
 * steps back; through the Ids service, the Clock's time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { uuidPattern } from "../../src/domain/Uuid.ts"
import { Ids, uuidV7Source } from "../../src/platform/Ids.ts"

const timeOf = (id: string) => parseInt(id.replaceAll("-", "").slice(0, 12), 16)

describe("uuidV7Source", () => {
  it("writes the version, the variant and the time", () => {
    const next = uuidV7Source()
    const at = Date.UTC(2026, 11, 1, 18, 0, 0, 123)
    const id = next(at)
    expect(id).toMatch(uuidPattern)
    expect(id[14]).toBe("7")
    expect(["8", "9", "a", "b"]).toContain(id[19])
    expect(timeOf(id)).toBe(at)
  })

  it("increases within a millisecond, borrows the next one past 4,096 ids, and never goes back", () => {
    const next = uuidV7Source()
    const at = 1_800_000_000_000
    const ids = Array.from({ length: 5_000 }, () => next(at))
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    expect(timeOf(ids[0]!)).toBe(at)
    expect(timeOf(ids.at(-1)!)).toBe(at + 1)
    // the clock stepping back does not take the ids back
    const later = next(at - 60_000)
    expect(later > ids.at(-1)!).toBe(true)
    const afterwards = next(at + 10)
    expect(afterwards > later && timeOf(afterwards) === at + 10).toBe(true)
  })
})

describe("Ids.timeOrdered", () => {
  it.effect("takes the instant it is given, not the Clock's", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2027, 0, 15))
      const ids = yield* Ids
      const at = new Date(Date.UTC(2026, 11, 31, 23, 59, 59, 999))
      const [a, b] = [yield* ids.timeOrdered(at), yield* ids.timeOrdered(at)]
      expect(timeOf(a)).toBe(at.getTime())
      expect(b > a).toBe(true)
    }).pipe(Effect.provide(Ids.layer))
  )
})
