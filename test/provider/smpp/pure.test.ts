/** The SMPP adapter's pure parts: receipt reading, id normalisation, the sliding MPS window, routing, backoff, statuses. */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeRouter } from "../../../src/provider/Routing.ts"
import { backoffMs } from "../../../src/provider/smpp/Backoff.ts"
import { parseDoneDate, readDeliverSm } from "../../../src/provider/smpp/DeliverSm.ts"
import { idForQuery, idFromReceipt, idFromResponse, parseProviderRef } from "../../../src/provider/smpp/MessageIds.ts"
import { rateGuardMs, SlidingRate } from "../../../src/provider/smpp/SlidingRate.ts"
import { describeStatus, isThrottling } from "../../../src/provider/smpp/Statuses.ts"

const receiptText = (id: string, stat: string, done = "2611230615") =>
  ({ message: `id:${id} sub:001 dlvrd:001 submit date:2611230610 done date:${done} stat:${stat} err:000 text:` })

describe("readDeliverSm", () => {
  it("prefers the TLVs to the text", () => {
    expect(readDeliverSm({ esm_class: 0x04, receipted_message_id: "77", message_state: 5, short_message: receiptText("12", "DELIVRD") }))
      .toEqual({ _tag: "Receipt", id: "77", outcome: "undeliverable", doneAt: new Date(Date.UTC(2026, 10, 23, 6, 15)) })
  })

  it.each([
    ["DELIVRD", "delivered"],
    ["UNDELIV", "undeliverable"],
    ["EXPIRED", "undeliverable"],
    ["REJECTD", "undeliverable"],
    ["DELETED", "undeliverable"]
  ])("reads stat:%s from the text as %s", (stat, outcome) => {
    expect(readDeliverSm({ esm_class: 0x04, short_message: receiptText("12", stat) })).toMatchObject({ _tag: "Receipt", id: "12", outcome })
  })

  it.each([[2, "delivered"], [3, "undeliverable"], [4, "undeliverable"], [5, "undeliverable"], [8, "undeliverable"]])(
    "reads message_state %i as %s",
    (state, outcome) => {
      expect(readDeliverSm({ esm_class: 0x04, receipted_message_id: "9", message_state: state, short_message: { message: "" } }))
        .toEqual({ _tag: "Receipt", id: "9", outcome, doneAt: undefined })
    }
  )

  it("changes nothing for ENROUTE, ACCEPTD and UNKNOWN", () => {
    expect(readDeliverSm({ esm_class: 0x04, short_message: receiptText("1", "ENROUTE") })).toEqual({ _tag: "NotFinal", state: "ENROUTE" })
    expect(readDeliverSm({ esm_class: 0x04, receipted_message_id: "1", message_state: 6 })).toEqual({ _tag: "NotFinal", state: "ACCEPTD" })
    expect(readDeliverSm({ esm_class: 0x04, short_message: receiptText("1", "UNKNOWN") })).toEqual({ _tag: "NotFinal", state: "UNKNOWN" })
  })

  it("cannot use a receipt without an id or a state", () => {
    expect(readDeliverSm({ esm_class: 0x04, short_message: { message: "stat:DELIVRD" } })._tag).toBe("Unreadable")
    expect(readDeliverSm({ esm_class: 0x04, short_message: { message: "id:5 stat:WHATEVER" } })._tag).toBe("Unreadable")
  })

  it("reads raw octets too, and tells a mobile-originated message from a receipt", () => {
    expect(readDeliverSm({ esm_class: 0x04, short_message: Buffer.from("id:abc stat:DELIVRD", "latin1") })).toMatchObject({ id: "abc", outcome: "delivered" })
    expect(readDeliverSm({ esm_class: 0x00, short_message: { message: "id:1 stat:DELIVRD" } })).toEqual({ _tag: "MobileOriginated" })
  })

  it("reads done dates of 10 or 12 digits in UTC and refuses impossible ones", () => {
    expect(parseDoneDate("2602281259")).toEqual(new Date(Date.UTC(2026, 1, 28, 12, 59)))
    expect(parseDoneDate("260228125930")).toEqual(new Date(Date.UTC(2026, 1, 28, 12, 59, 30)))
    expect(parseDoneDate("2602301200")).toBeUndefined()
    expect(parseDoneDate("2601012400")).toBeUndefined()
    expect(parseDoneDate("26010112")).toBeUndefined()
  })
})

describe("message ids", () => {
  it("normalises hexadecimal and decimal ids to the same decimal string", () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), (n) => {
      const hex = n.toString(16)
      const dec = n.toString(10)
      expect(idFromResponse("hex_resp_dec_receipt", hex.toUpperCase())).toBe(idFromReceipt("hex_resp_dec_receipt", `00${dec}`))
      expect(idFromResponse("dec_resp_hex_receipt", dec)).toBe(idFromReceipt("dec_resp_hex_receipt", hex))
      expect(idForQuery("hex_resp_dec_receipt", idFromResponse("hex_resp_dec_receipt", hex))).toBe(hex.toUpperCase())
    }))
  })

  it("keeps exact ids, and ids that are not numbers in the expected base, as written", () => {
    expect(idFromResponse("exact", "0a1B")).toBe("0a1B")
    expect(idFromReceipt("exact", "0a1B")).toBe("0a1B")
    expect(idFromResponse("hex_resp_dec_receipt", "msg-1")).toBe("msg-1")
    expect(idFromReceipt("hex_resp_dec_receipt", "1A")).toBe("1A")
    expect(idForQuery("dec_resp_hex_receipt", "26")).toBe("26")
  })

  it("splits a provider ref at its first colon", () => {
    expect(parseProviderRef("telma:12:34")).toEqual({ route: "telma", id: "12:34" })
    expect(parseProviderRef("sim-123")).toBeUndefined()
    expect(parseProviderRef(":12")).toBeUndefined()
  })
})

describe("SlidingRate", () => {
  it("never allows more than the cap in any window of 1 s plus the guard, and allows as soon as it may", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 20 }), fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 200 }), (cap, gaps) => {
      const rate = new SlidingRate(cap)
      const taken: Array<number> = []
      let now = 0
      for (const gap of gaps) {
        now += gap
        const wait = rate.waitMs(now)
        expect(rate.tryTake(now)).toBe(wait === 0)
        if (wait > 0) {
          now += wait
          expect(rate.tryTake(now)).toBe(true)
        }
        taken.push(now)
      }
      for (let i = cap; i < taken.length; i++) expect(taken[i]! - taken[i - cap]!).toBeGreaterThanOrEqual(1000 + rateGuardMs)
    }))
  })
})

describe("routing", () => {
  it("takes the longest matching prefix; * matches everything; no match is undefined", () => {
    const route = makeRouter([
      { name: "telma", prefixes: ["+26134", "+26138"] },
      { name: "special", prefixes: ["+2613400"] },
      { name: "airtel", prefixes: ["+26133"] }
    ])
    expect(route("+261341234567")?.name).toBe("telma")
    expect(route("+261340012345")?.name).toBe("special")
    expect(route("+261331234567")?.name).toBe("airtel")
    expect(route("+261321234567")).toBeUndefined()
    const withDefault = makeRouter([{ name: "any", prefixes: ["*"] }, { name: "orange", prefixes: ["+26132"] }])
    expect(withDefault("+261321234567")?.name).toBe("orange")
    expect(withDefault("+261391234567")?.name).toBe("any")
  })
})

describe("backoff and statuses", () => {
  it("doubles from the initial delay up to the cap, jittered between half and all of it", () => {
    expect([0, 1, 2, 3, 10].map((a) => backoffMs(a, 100, 1000, 0.999999))).toEqual([100, 200, 400, 800, 1000])
    expect([0, 1, 2, 3, 10].map((a) => backoffMs(a, 100, 1000, 0))).toEqual([50, 100, 200, 400, 500])
    expect(backoffMs(5000, 100, 1000, 0.5)).toBe(750)
  })

  it("names statuses and knows which ones ask to slow down", () => {
    expect(describeStatus(0x58)).toBe("0x58 ESME_RTHROTTLED")
    expect(describeStatus(0x0e)).toBe("0x0e ESME_RINVPASWD")
    expect(describeStatus(0x400)).toBe("0x400 (vendor-specific status)")
    expect([0x58, 0x14, 0x45, 0x08, 0].map(isThrottling)).toEqual([true, true, false, false, false])
  })
})
