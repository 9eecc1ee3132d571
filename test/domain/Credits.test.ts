/** Lot arithmetic of the ledger (src/domain/Credits.ts): which lots fund which reservation. */
import { describe, expect, it } from "vitest"
import { allocate } from "../../src/domain/Credits.ts"

describe("allocate", () => {
  it("draws from the lots in their given order, a reservation spanning lots", () => {
    expect(allocate([{ id: "L1", free: 3 }, { id: "L2", free: 5 }], [{ messageId: "m1", credits: 4 }])).toEqual([
      { messageId: "m1", lotId: "L1", amount: 3 },
      { messageId: "m1", lotId: "L2", amount: 1 }
    ])
  })

  it("draws each reservation in turn, the next one starting where the last left off", () => {
    expect(allocate(
      [{ id: "L1", free: 2 }, { id: "L2", free: 2 }, { id: "L3", free: 9 }],
      [{ messageId: "m1", credits: 1 }, { messageId: "m2", credits: 2 }, { messageId: "m3", credits: 3 }]
    )).toEqual([
      { messageId: "m1", lotId: "L1", amount: 1 },
      { messageId: "m2", lotId: "L1", amount: 1 },
      { messageId: "m2", lotId: "L2", amount: 1 },
      { messageId: "m3", lotId: "L2", amount: 1 },
      { messageId: "m3", lotId: "L3", amount: 2 }
    ])
  })

  it("skips lots with nothing free", () => {
    expect(allocate([{ id: "L0", free: 0 }, { id: "L1", free: 2 }, { id: "L2", free: 0 }, { id: "L3", free: 1 }], [
      { messageId: "m1", credits: 3 }
    ])).toEqual([{ messageId: "m1", lotId: "L1", amount: 2 }, { messageId: "m1", lotId: "L3", amount: 1 }])
  })

  it("merges two reservations of one message from one lot into one hold", () => {
    expect(allocate([{ id: "L1", free: 10 }], [{ messageId: "m1", credits: 2 }, { messageId: "m1", credits: 3 }]))
      .toEqual([{ messageId: "m1", lotId: "L1", amount: 5 }])
    // ... but not holds of another message, nor of another lot
    expect(allocate([{ id: "L1", free: 2 }, { id: "L2", free: 9 }], [{ messageId: "m1", credits: 2 }, { messageId: "m1", credits: 1 }]))
      .toEqual([{ messageId: "m1", lotId: "L1", amount: 2 }, { messageId: "m1", lotId: "L2", amount: 1 }])
  })

  it("funds exactly what the lots hold, and one credit more is refused as a whole (undefined)", () => {
    const lots = [{ id: "L1", free: 2 }, { id: "L2", free: 3 }]
    expect(allocate(lots, [{ messageId: "m1", credits: 2 }, { messageId: "m2", credits: 3 }])).toHaveLength(2)
    expect(allocate(lots, [{ messageId: "m1", credits: 2 }, { messageId: "m2", credits: 4 }])).toBeUndefined()
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
