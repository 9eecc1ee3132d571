/**
 * Receipts through the adapter: handed to the inbox before being acknowledged, read from the
 * TLVs or from the text, whatever their order with the submit_sm_resp; answered 0x64 when the
 * inbox cannot store them, so that the SMSC sends them again; mobile-originated messages
 * acknowledged and ignored.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import type { SubmitResult } from "../../../src/provider/Provider.ts"
import { FakeInbox, routeTo, startSmsc, submission, testSettings, until, withProvider } from "./support.ts"

let smsc: Smsc
beforeEach(async () => {
  smsc = await startSmsc()
})
afterEach(() => smsc.dispose())

const refOf = (r: SubmitResult): string =>
  r._tag === "Accepted" ? r.providerRef : expect.fail(`not accepted: ${JSON.stringify(r)}`)
const idOf = (ref: string): string => ref.slice("smsc:".length)

describe("receipts", () => {
  it("reads the id, state and dates from the text when the SMSC sends no TLVs; a done date to the minute gives way to the arrival", async () => {
    smsc.receiptTlvs = false
    const inbox = new FakeInbox()
    const before = Date.now()
    const [delivered, undeliverable] = await withProvider(testSettings([routeTo(smsc)]), inbox, (p) =>
      Effect.gen(function* () {
        const results = yield* Effect.forEach([testNumbers.delivered, testNumbers.undeliverable], (to) =>
          p.submit(submission(to))
        )
        yield* until("two receipts", () => inbox.receipts.length === 2)
        return results
      })
    )
    const outcome = (ref: string) => inbox.receipts.find((r) => r.providerRef === ref)
    expect(outcome(refOf(delivered!))?.outcome).toBe("delivered")
    expect(outcome(refOf(undeliverable!))?.outcome).toBe("undeliverable")
    // the done date is YYMMDDhhmm in UTC, the receipt's minute: coarser than its arrival, which
    // is when it happened as far as anyone can tell (never before the submission)
    for (const r of inbox.receipts) {
      expect(r.occurredAt.getTime()).toBeGreaterThanOrEqual(before)
      expect(r.occurredAt.getTime()).toBeLessThanOrEqual(Date.now())
      expect(r.submittedAt!.getTime() % 60_000).toBe(0)
      expect(r.submittedAt!.getTime()).toBeGreaterThan(before - 60_000)
      expect(r.recipient).toMatch(/^\+2613400000/)
    }
  })

  /** Sends to the delivered number and waits until `done`; the submit result. */
  const deliveredOnce = (inbox: FakeInbox, done: () => boolean, logs: Array<string> = []) =>
    withProvider(
      testSettings([routeTo(smsc)]),
      inbox,
      (p) =>
        Effect.gen(function* () {
          const result = yield* p.submit(submission(testNumbers.delivered))
          yield* until("the receipt's handling", done)
          return refOf(result)
        }),
      logs
    )

  it("hands a receipt that arrives before its submit_sm_resp to the inbox, under the same ref", async () => {
    smsc.receiptBeforeResponse = true
    const inbox = new FakeInbox()
    const ref = await deliveredOnce(inbox, () => inbox.receipts.length === 1)
    expect(inbox.receipts.map((r) => [r.providerRef, r.outcome])).toEqual([[ref, "delivered"]])
    expect(smsc.receiptAnswers).toEqual([{ id: idOf(ref), status: 0 }])
  })

  it("hands a repeated receipt to the inbox again and acknowledges both copies", async () => {
    smsc.duplicateReceipts = true
    const inbox = new FakeInbox()
    const ref = await deliveredOnce(inbox, () => smsc.receiptAnswers.length === 2)
    expect(inbox.receipts.map((r) => r.providerRef)).toEqual([ref, ref])
    expect(smsc.receiptAnswers).toEqual([
      { id: idOf(ref), status: 0 },
      { id: idOf(ref), status: 0 }
    ])
  })

  it("answers 0x64 while the inbox cannot store a receipt, and stores it when the SMSC sends it again; logs the outage once", async () => {
    const inbox = new FakeInbox()
    inbox.refuseReceipts = 3
    const logs: Array<string> = []
    const ref = await deliveredOnce(inbox, () => inbox.receipts.length === 1 && smsc.receiptAnswers.length === 4, logs)
    const id = idOf(ref)
    expect(smsc.receiptAnswers).toEqual([
      { id, status: 0x64 },
      { id, status: 0x64 },
      { id, status: 0x64 },
      { id, status: 0 }
    ])
    expect(inbox.refusedReceipts).toBe(3)
    expect(inbox.receipts.map((r) => r.providerRef)).toEqual([ref])
    // one line when receipts stop being stored, one when they are again: not one per refused receipt
    const receiptLines = logs.map((l) => JSON.parse(l)).filter((l) => String(l.message).includes("receipt"))
    // a line logged with its cause has [message, cause] as its message
    expect(receiptLines.map((l) => [l.level, [l.message].flat()[0]])).toEqual([
      ["WARN", "SMPP receipts not stored: the inbox is unavailable; the SMSC will send them again"],
      ["INFO", "SMPP receipts stored again"]
    ])
  })

  it("hands a mobile-originated message to the inbox, acknowledges it once stored, and logs no number", async () => {
    const inbox = new FakeInbox()
    const logs: Array<string> = []
    await withProvider(
      testSettings([routeTo(smsc)]),
      inbox,
      (p) =>
        Effect.gen(function* () {
          yield* p.submit(submission(testNumbers.acceptedNoReceipt))
          expect(smsc.sendMobileOriginated({ from: "+261341234567", to: "DEMO", text: "STOP" })).toBe(1)
          yield* until("its answer", () => smsc.mobileOriginatedAnswers.length === 1)
        }),
      logs
    )
    expect(smsc.mobileOriginatedAnswers).toEqual([0])
    expect(inbox.receipts).toEqual([])
    expect(inbox.parts.map((p) => [p.from, Buffer.from(p.octets).toString("latin1")])).toEqual([
      ["+261341234567", "STOP"]
    ])
    expect(logs.join("\n")).not.toContain("1234567")
  })
})
