/** The Balance resource (spec 2.7) as the API shows a ledger balance. */
import { describe, expect, it } from "vitest"
import { balanceBody } from "../../src/ledger/BalanceBody.ts"

describe("balanceBody", () => {
  it("names each field as the spec does", () => {
    expect(balanceBody({ total: 10, reserved: 3, available: 7, validUntil: "2026-02-01" }))
      .toEqual({ total: 10, reserved: 3, available: 7, valid_until: "2026-02-01" })
    expect(balanceBody({ total: 0, reserved: 0, available: 0, validUntil: null }))
      .toEqual({ total: 0, reserved: 0, available: 0, valid_until: null })
  })
})
