/** Lot arithmetic of the ledger (src/domain/Credits.ts): which lots fund which reservation. */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { allocate, creditsPerSplitLotMin, lotsPerGrantMax, splitGrant } from "../../src/domain/Credits.ts"

describe("allocate", () => {
  it("draws from the lots in their given order, a reservation spanning lots", () => {
    expect(
      allocate(
        [
          { id: "L1", free: 3 },
          { id: "L2", free: 5 }
        ],
        [{ messageId: "m1", credits: 4 }]
      )
    ).toEqual([
      { messageId: "m1", lotId: "L1", amount: 3 },
      { messageId: "m1", lotId: "L2", amount: 1 }
    ])
  })

  it("draws each reservation in turn, the next one starting where the last left off", () => {
    expect(
      allocate(
        [
          { id: "L1", free: 2 },
          { id: "L2", free: 2 },
          { id: "L3", free: 9 }
        ],
        [
          { messageId: "m1", credits: 1 },
          { messageId: "m2", credits: 2 },
          { messageId: "m3", credits: 3 }
        ]
      )
    ).toEqual([
      { messageId: "m1", lotId: "L1", amount: 1 },
      { messageId: "m2", lotId: "L1", amount: 1 },
      { messageId: "m2", lotId: "L2", amount: 1 },
      { messageId: "m3", lotId: "L2", amount: 1 },
      { messageId: "m3", lotId: "L3", amount: 2 }
    ])
  })

  it("skips lots with nothing free", () => {
    expect(
      allocate(
        [
          { id: "L0", free: 0 },
          { id: "L1", free: 2 },
          { id: "L2", free: 0 },
          { id: "L3", free: 1 }
        ],
        [{ messageId: "m1", credits: 3 }]
      )
    ).toEqual([
      { messageId: "m1", lotId: "L1", amount: 2 },
      { messageId: "m1", lotId: "L3", amount: 1 }
    ])
  })

  it("merges two reservations of one message from one lot into one hold", () => {
    expect(
      allocate(
        [{ id: "L1", free: 10 }],
        [
          { messageId: "m1", credits: 2 },
          { messageId: "m1", credits: 3 }
        ]
      )
    ).toEqual([{ messageId: "m1", lotId: "L1", amount: 5 }])
    // ... but not holds of another message, nor of another lot
    expect(
      allocate(
        [
          { id: "L1", free: 2 },
          { id: "L2", free: 9 }
        ],
        [
          { messageId: "m1", credits: 2 },
          { messageId: "m1", credits: 1 }
        ]
      )
    ).toEqual([
      { messageId: "m1", lotId: "L1", amount: 2 },
      { messageId: "m1", lotId: "L2", amount: 1 }
    ])
  })

  it("funds exactly what the lots hold, and one credit more is refused as a whole (undefined)", () => {
    const lots = [
      { id: "L1", free: 2 },
      { id: "L2", free: 3 }
    ]
    expect(
      allocate(lots, [
        { messageId: "m1", credits: 2 },
        { messageId: "m2", credits: 3 }
      ])
    ).toHaveLength(2)
    expect(
      allocate(lots, [
        { messageId: "m1", credits: 2 },
        { messageId: "m2", credits: 4 }
      ])
    ).toBeUndefined()
    expect(allocate([], [{ messageId: "m1", credits: 1 }])).toBeUndefined()
    expect(allocate([{ id: "L0", free: 0 }], [{ messageId: "m1", credits: 1 }])).toBeUndefined()
  })

  it("reserves nothing for no reservation or a reservation of zero credits, and leaves its inputs alone", () => {
    expect(allocate([], [])).toEqual([])
    expect(allocate([{ id: "L1", free: 1 }], [{ messageId: "m1", credits: 0 }])).toEqual([])
    const lots = [{ id: "L1", free: 4 }]
    allocate(lots, [{ messageId: "m1", credits: 4 }])
    expect(lots).toEqual([{ id: "L1", free: 4 }])
  })
})

describe("splitGrant", () => {
  it("splits a grant into lots that add up to it, differ by at most one credit, each at least the minimum", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000_000 }), (amount) => {
        const lots = splitGrant(amount)
        expect(lots.reduce((a, b) => a + b, 0)).toBe(amount)
        expect(lots.length).toBeGreaterThanOrEqual(1)
        expect(lots.length).toBeLessThanOrEqual(lotsPerGrantMax)
        expect(Math.max(...lots) - Math.min(...lots)).toBeLessThanOrEqual(1)
        if (lots.length > 1) expect(Math.min(...lots)).toBeGreaterThanOrEqual(creditsPerSplitLotMin)
        // as many lots as the minimum allows: one more would hold less than the minimum
        if (lots.length < lotsPerGrantMax)
          expect(Math.floor(amount / (lots.length + 1))).toBeLessThan(creditsPerSplitLotMin)
      })
    )
  })

  it("keeps a small grant as one lot and splits a large one as far as the maximum", () => {
    expect(splitGrant(1)).toEqual([1])
    expect(splitGrant(2 * creditsPerSplitLotMin - 1)).toEqual([2 * creditsPerSplitLotMin - 1])
    expect(splitGrant(2 * creditsPerSplitLotMin + 1)).toEqual([creditsPerSplitLotMin + 1, creditsPerSplitLotMin])
    expect(splitGrant(100_000)).toEqual(Array.from({ length: 32 }, () => 3125))
  })
})
