/** The SMPP adapter's pure parts: receipt reading, id normalisation and checks, the sliding MPS window, routing, retry schedules, statuses. */
import { Effect } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeRouter } from "../../../src/provider/Routing.ts"
import { occurredAt, parseReceiptDate, readDeliverSm, recipientOf } from "../../../src/provider/smpp/DeliverSm.ts"
import {
  idForQuery,
  idFromReceipt,
  idFromResponse,
  isValidMessageId,
  parseProviderRef
} from "../../../src/provider/smpp/MessageIds.ts"
import {
  reconnectSchedule,
  stepper,
  throttleSchedule,
  youngOutageMs
} from "../../../src/provider/smpp/RetrySchedules.ts"
import { capSplit, SlidingRate, slidingWindowMs } from "../../../src/provider/smpp/SlidingRate.ts"
import { describeStatus, isThrottling } from "../../../src/provider/smpp/Statuses.ts"

const receiptText = (id: string, stat: string, done = "2611230615") => ({
  message: `id:${id} sub:001 dlvrd:001 submit date:2611230610 done date:${done} stat:${stat} err:000 text:`
})

describe("readDeliverSm", () => {
  it("prefers the TLVs to the text", () => {
    expect(
      readDeliverSm({
        esm_class: 0x04,
        receipted_message_id: "77",
        message_state: 5,
        short_message: receiptText("12", "DELIVRD")
      })
    ).toEqual({
      _tag: "Receipt",
      id: "77",
      outcome: "undeliverable",
      recipient: null,
      submittedAt: new Date(Date.UTC(2026, 10, 23, 6, 10)),
      doneAt: new Date(Date.UTC(2026, 10, 23, 6, 15)),
      donePrecisionMs: 60_000
    })
  })

  it.each([
    ["DELIVRD", "delivered"],
    ["UNDELIV", "undeliverable"],
    ["EXPIRED", "undeliverable"],
    ["REJECTD", "undeliverable"],
    ["DELETED", "undeliverable"]
  ])("reads stat:%s from the text as %s", (stat, outcome) => {
    expect(readDeliverSm({ esm_class: 0x04, short_message: receiptText("12", stat) })).toMatchObject({
      _tag: "Receipt",
      id: "12",
      outcome
    })
  })

  it.each([
    [2, "delivered"],
    [3, "undeliverable"],
    [4, "undeliverable"],
    [5, "undeliverable"],
    [8, "undeliverable"]
  ])("reads message_state %i as %s", (state, outcome) => {
    expect(
      readDeliverSm({
        esm_class: 0x04,
        receipted_message_id: "9",
        message_state: state,
        short_message: { message: "" }
      })
    ).toEqual({
      _tag: "Receipt",
      id: "9",
      outcome,
      recipient: null,
      submittedAt: undefined,
      doneAt: undefined,
      donePrecisionMs: 60_000
    })
  })

  it("changes nothing for ENROUTE, ACCEPTD and UNKNOWN", () => {
    expect(readDeliverSm({ esm_class: 0x04, short_message: receiptText("1", "ENROUTE") })).toEqual({
      _tag: "NotFinal",
      state: "ENROUTE"
    })
    expect(readDeliverSm({ esm_class: 0x04, receipted_message_id: "1", message_state: 6 })).toEqual({
      _tag: "NotFinal",
      state: "ACCEPTD"
    })
    expect(readDeliverSm({ esm_class: 0x04, short_message: receiptText("1", "UNKNOWN") })).toEqual({
      _tag: "NotFinal",
      state: "UNKNOWN"
    })
  })

  it("cannot use a receipt without an id or a state", () => {
    expect(readDeliverSm({ esm_class: 0x04, short_message: { message: "stat:DELIVRD" } })._tag).toBe("Unreadable")
    expect(readDeliverSm({ esm_class: 0x04, short_message: { message: "id:5 stat:WHATEVER" } })._tag).toBe("Unreadable")
  })

  it("reads raw octets too, and tells a mobile-originated message from a receipt", () => {
    expect(
      readDeliverSm({ esm_class: 0x04, short_message: Buffer.from("id:abc stat:DELIVRD", "latin1") })
    ).toMatchObject({ id: "abc", outcome: "delivered" })
    expect(readDeliverSm({ esm_class: 0x00, short_message: { message: "id:1 stat:DELIVRD" } })).toEqual({
      _tag: "MobileOriginated"
    })
  })

  it("reads dates of 10 or 12 digits in UTC and refuses impossible ones", () => {
    expect(parseReceiptDate("2602281259")).toEqual(new Date(Date.UTC(2026, 1, 28, 12, 59)))
    expect(parseReceiptDate("260228125930")).toEqual(new Date(Date.UTC(2026, 1, 28, 12, 59, 30)))
    expect(parseReceiptDate("2602301200")).toBeUndefined()
    expect(parseReceiptDate("2601012400")).toBeUndefined()
    expect(parseReceiptDate("26010112")).toBeUndefined()
  })

  it("reads the text from message_payload when short_message is empty (deliver_sm and data_sm)", () => {
    const payload = {
      message: "id:A1 sub:001 dlvrd:001 submit date:2611230610 done date:261123061530 stat:DELIVRD err:000 text:"
    }
    expect(readDeliverSm({ esm_class: 0x04, short_message: { message: "" }, message_payload: payload })).toMatchObject({
      _tag: "Receipt",
      id: "A1",
      outcome: "delivered",
      doneAt: new Date(Date.UTC(2026, 10, 23, 6, 15, 30)),
      donePrecisionMs: 1000
    })
    expect(readDeliverSm({ esm_class: 0x04, message_payload: payload })).toMatchObject({ _tag: "Receipt", id: "A1" })
  })

  it("reads the number a receipt is about from source_addr, international or national, else none", () => {
    expect(recipientOf("261340000001")).toBe("+261340000001")
    expect(recipientOf("+261340000001")).toBe("+261340000001")
    expect(recipientOf("0340000001")).toBe("+261340000001")
    expect(recipientOf("DEMO")).toBeNull()
    expect(recipientOf("33612345678")).toBeNull()
    expect(recipientOf(undefined)).toBeNull()
    expect(
      readDeliverSm({ esm_class: 0x04, source_addr: "261341234567", short_message: receiptText("5", "DELIVRD") })
    ).toMatchObject({ recipient: "+261341234567" })
  })

  it("refuses a message id that is empty, too long, or holds a control or non-ASCII character (never reaches the database)", () => {
    for (const id of ["", "x".repeat(66), "ab\u0000cd", "ab cd", "é1", "a\u007f"])
      expect(isValidMessageId(id), JSON.stringify(id)).toBe(false)
    for (const id of ["1", "x".repeat(65), "0A1b-_:.~!"]) expect(isValidMessageId(id), id).toBe(true)
    expect(
      readDeliverSm({ esm_class: 0x04, data_coding: 8, short_message: { message: "id:12\u000034 stat:DELIVRD" } })
    ).toEqual({ _tag: "Unreadable", why: 'receipt with an invalid message id "12\\u000034"' })
    expect(readDeliverSm({ esm_class: 0x04, receipted_message_id: "9".repeat(5000), message_state: 2 })).toMatchObject({
      _tag: "Unreadable",
      why: expect.stringMatching(/^receipt with an invalid message id "9{40}…"$/)
    })
  })

  it("dates a delivery at its arrival when the done date is no finer than the arrival, else at the done date", () => {
    const minute = new Date(Date.UTC(2026, 10, 23, 0, 37))
    const arrived = new Date(Date.UTC(2026, 10, 23, 0, 37, 52, 750))
    expect(occurredAt({ doneAt: minute, donePrecisionMs: 60_000 }, arrived)).toEqual(arrived)
    expect(occurredAt({ doneAt: undefined, donePrecisionMs: 60_000 }, arrived)).toEqual(arrived)
    expect(occurredAt({ doneAt: new Date(Date.UTC(2026, 10, 23, 0, 35)), donePrecisionMs: 60_000 }, arrived)).toEqual(
      new Date(Date.UTC(2026, 10, 23, 0, 35))
    )
    expect(occurredAt({ doneAt: new Date(Date.UTC(2026, 10, 23, 0, 37, 50)), donePrecisionMs: 1000 }, arrived)).toEqual(
      new Date(Date.UTC(2026, 10, 23, 0, 37, 50))
    )
    // a done date after the arrival (the SMSC's clock is ahead) is not believed
    expect(occurredAt({ doneAt: new Date(Date.UTC(2026, 10, 23, 0, 40)), donePrecisionMs: 60_000 }, arrived)).toEqual(
      arrived
    )
  })
})

describe("message ids", () => {
  it("normalises hexadecimal and decimal ids to the same decimal string", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), (n) => {
        const hex = n.toString(16)
        const dec = n.toString(10)
        expect(idFromResponse("hex_resp_dec_receipt", hex.toUpperCase())).toBe(
          idFromReceipt("hex_resp_dec_receipt", `00${dec}`)
        )
        expect(idFromResponse("dec_resp_hex_receipt", dec)).toBe(idFromReceipt("dec_resp_hex_receipt", hex))
        expect(idForQuery("hex_resp_dec_receipt", idFromResponse("hex_resp_dec_receipt", hex))).toBe(hex.toUpperCase())
      })
    )
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
  it("never allows more than the cap in any window of 1 s, and allows as soon as it may", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 200 }),
        (cap, gaps) => {
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
          // a second and the Clock's margin (slidingWindowMs): more than 1000 whole milliseconds
          for (let i = cap; i < taken.length; i++)
            expect(taken[i]! - taken[i - cap]!).toBeGreaterThanOrEqual(slidingWindowMs)
          expect(slidingWindowMs).toBeGreaterThan(1000)
        }
      )
    )
  })
})

describe("capSplit", () => {
  it("keeps what awaits an answer plus a second's writes within the cap, within the window, and leaves the rate at least 95 % of it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 5000 }), fc.integer({ min: 1, max: 1000 }), (cap, window) => {
        const { inFlight, perSecond } = capSplit(cap, window)
        expect(inFlight + perSecond).toBeLessThanOrEqual(cap)
        expect(inFlight).toBeGreaterThanOrEqual(1)
        expect(inFlight).toBeLessThanOrEqual(window)
        expect(perSecond).toBeGreaterThanOrEqual(Math.floor(cap * 0.95))
      })
    )
  })

  it("splits the caps the README names as it says", () => {
    expect(capSplit(200, 10)).toEqual({ inFlight: 10, perSecond: 190 })
    expect(capSplit(100, 50)).toEqual({ inFlight: 5, perSecond: 95 })
    expect(capSplit(100, 2)).toEqual({ inFlight: 2, perSecond: 98 })
    expect(capSplit(4, 10)).toEqual({ inFlight: 1, perSecond: 3 })
    expect(capSplit(1, 10)).toEqual({ inFlight: 1, perSecond: 1 })
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
    const withDefault = makeRouter([
      { name: "any", prefixes: ["*"] },
      { name: "orange", prefixes: ["+26132"] }
    ])
    expect(withDefault("+261321234567")?.name).toBe("orange")
    expect(withDefault("+261391234567")?.name).toBe("any")
  })
})

/** The delays a schedule gives for failures at the given instants (ms since the first). */
const delaysAt = <I>(
  schedule: Parameters<typeof stepper<I>>[0],
  input: I,
  instants: ReadonlyArray<number>
): ReadonlyArray<number> =>
  Effect.runSync(
    Effect.gen(function* () {
      const next = yield* stepper(schedule)
      const delays: Array<number> = []
      for (const at of instants) delays.push(yield* next(1_000_000 + at, input))
      return delays
    })
  )

describe("retry schedules and statuses", () => {
  it("binds again 0.5 s after a loss, then doubling with jitter, at most 2 s while the outage is young, then up to the cap", () => {
    const timing = { reconnectInitialMs: 500, reconnectMaxMs: 30_000 }
    for (let run = 0; run < 50; run++) {
      const young = delaysAt(reconnectSchedule(timing), "lost", [0, 500, 1500, 3500, 5500, 7500])
      expect(young[0]).toBe(500)
      expect(young[1]).toBeGreaterThanOrEqual(800)
      expect(young[1]).toBeLessThanOrEqual(1200)
      for (const d of young.slice(2)) {
        expect(d).toBeGreaterThanOrEqual(1600)
        expect(d).toBeLessThanOrEqual(2400)
      }
      // past the young part of the outage the doubling resumes: 2^7 * 0.5 s capped at 30 s, jittered
      const old = delaysAt(reconnectSchedule(timing), "lost", [
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        youngOutageMs + 1,
        youngOutageMs + 2
      ])
      expect(old[7]).toBeGreaterThanOrEqual(24_000)
      expect(old[7]).toBeLessThanOrEqual(36_000)
      expect(old[8]).toBeGreaterThanOrEqual(24_000)
    }
  })

  it("submits a throttled part again after a doubling, jittered delay up to its cap", () => {
    const delays = delaysAt(throttleSchedule({ throttleInitialMs: 100, throttleMaxMs: 1000 }), 0x58, [0, 1, 2, 3, 4, 5])
    const bases = [100, 200, 400, 800, 1000, 1000]
    delays.forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(bases[i]! * 0.8)
      expect(d).toBeLessThanOrEqual(bases[i]! * 1.2)
    })
  })

  it("names statuses and knows which ones ask to slow down", () => {
    expect(describeStatus(0x58)).toBe("0x58 ESME_RTHROTTLED")
    expect(describeStatus(0x0e)).toBe("0x0e ESME_RINVPASWD")
    expect(describeStatus(0x400)).toBe("0x400 (vendor-specific status)")
    expect([0x58, 0x14, 0x45, 0x08, 0].map(isThrottling)).toEqual([true, true, false, false, false])
  })
})
