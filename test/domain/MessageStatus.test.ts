import { Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  canTransition,
  finalStatuses,
  isFinal,
  MessageStatuses,
  MessageStatusSchema,
  transitions
} from "../../src/domain/MessageStatus.ts"
import type { MessageStatus } from "../../src/domain/MessageStatus.ts"

/** The allowed transitions, written out independently of the implementation. */
const allowed: ReadonlyArray<readonly [MessageStatus, MessageStatus]> = [
  ["scheduled", "processing"],
  ["scheduled", "blocked"],
  ["scheduled", "failed"],
  ["processing", "accepted"],
  ["processing", "failed"],
  ["processing", "blocked"],
  ["processing", "unknown"],
  ["accepted", "delivered"],
  ["accepted", "undeliverable"],
  ["unknown", "accepted"],
  ["unknown", "failed"]
]
const isAllowed = (from: MessageStatus, to: MessageStatus): boolean => allowed.some(([f, t]) => f === from && t === to)

const pairs = MessageStatuses.flatMap((from) => MessageStatuses.map((to) => [from, to] as const))
const status = fc.constantFrom(...MessageStatuses)

describe("MessageStatus", () => {
  it("lists the eight statuses in order", () => {
    expect(MessageStatuses).toEqual([
      "scheduled",
      "processing",
      "accepted",
      "delivered",
      "undeliverable",
      "blocked",
      "failed",
      "unknown"
    ])
  })

  it.each(pairs)("%s -> %s matches the expected table", (from, to) => {
    expect(canTransition(from, to)).toBe(isAllowed(from, to))
    expect(transitions[from].includes(to)).toBe(isAllowed(from, to))
  })

  it("allows exactly the 11 listed transitions and the table has no duplicates", () => {
    expect(pairs.filter(([f, t]) => canTransition(f, t))).toHaveLength(allowed.length)
    for (const s of MessageStatuses) expect(new Set(transitions[s]).size).toBe(transitions[s].length)
    expect(Object.keys(transitions).sort()).toEqual([...MessageStatuses].sort())
  })

  it("has delivered, undeliverable, failed and blocked as the final statuses", () => {
    expect([...finalStatuses].sort()).toEqual(["blocked", "delivered", "failed", "undeliverable"])
    for (const s of MessageStatuses) expect(isFinal(s), s).toBe(finalStatuses.some((f) => f === s))
  })

  it("final statuses have no outgoing transition, and every non-final status has one", () => {
    for (const s of MessageStatuses) {
      expect(transitions[s].length === 0, s).toBe(isFinal(s))
      for (const t of MessageStatuses) if (isFinal(s)) expect(canTransition(s, t), `${s} -> ${t}`).toBe(false)
    }
  })

  it("nothing goes back to scheduled, and no status transitions to itself", () => {
    fc.assert(
      fc.property(status, (s) => {
        expect(canTransition(s, "scheduled")).toBe(false)
        expect(canTransition(s, s)).toBe(false)
      })
    )
  })

  it("unknown never goes back to processing (no resend)", () => {
    expect(canTransition("unknown", "processing")).toBe(false)
    expect(canTransition("unknown", "scheduled")).toBe(false)
  })

  it("every status is reachable from scheduled and every path ends in a final status", () => {
    const reachable = new Set<MessageStatus>(["scheduled"])
    const queue: Array<MessageStatus> = ["scheduled"]
    for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
      for (const t of transitions[s]) {
        if (!reachable.has(t)) {
          reachable.add(t)
          queue.push(t)
        }
      }
    }
    expect([...reachable].sort()).toEqual([...MessageStatuses].sort())
    // acyclic: a walk can take at most 4 steps (scheduled -> processing -> unknown -> accepted -> delivered)
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 10 }), (choices) => {
        let s: MessageStatus = "scheduled"
        let steps = 0
        for (const c of choices) {
          const next: ReadonlyArray<MessageStatus> = transitions[s]
          if (next.length === 0) break
          s = next[c % next.length]!
          steps++
        }
        expect(steps).toBeLessThanOrEqual(4)
        if (choices.length >= 4) expect(isFinal(s)).toBe(true)
      })
    )
  })

  it("MessageStatusSchema accepts exactly the eight statuses", () => {
    const is = Schema.is(MessageStatusSchema)
    for (const s of MessageStatuses) expect(is(s), s).toBe(true)
    for (const s of ["", "Scheduled", "sent", "queued", "pending"]) expect(is(s), s).toBe(false)
    expect(Schema.decodeUnknownSync(MessageStatusSchema)("accepted")).toBe("accepted")
    expect(() => Schema.decodeUnknownSync(MessageStatusSchema)("resent")).toThrow()
  })
})
