/**
 * The dispatcher's window (WorkSteps.dispatchWindow): with a provider capped at n submissions a
 * second it keeps at most what it hands over in 0.4 s in flight, so that a claim waiting behind
 * them holds another organisation's message a second at most (docs/decisions.md#fair-share-and-fleet-limits).
 */
import { describe, expect, it } from "vitest"
import { dispatchConcurrencyMax, dispatchWindow } from "../../src/dispatch/WorkSteps.ts"

describe("dispatch window", () => {
  it("is the full window for a provider without a rate", () => {
    expect(dispatchWindow(undefined)).toBe(dispatchConcurrencyMax)
  })
  it("is 0.4 s of the provider's rate, rounded up, at least one, at most the full window", () => {
    expect(dispatchWindow(200)).toBe(80)
    expect(dispatchWindow(101)).toBe(41)
    expect(dispatchWindow(1)).toBe(1)
    expect(dispatchWindow(100_000)).toBe(dispatchConcurrencyMax)
  })
})
