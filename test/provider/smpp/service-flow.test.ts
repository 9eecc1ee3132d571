/**
 * The SMPP path under service load (SMS_PROVIDER=smpp, the real loops, the SMSC simulator
 * in-process): an SMSC restart mid-load (in flight: `unknown`, never resent; queued: sent after
 * the reconnection; nothing lost, credits exact), the window and the MPS cap measured at the SMSC,
 * throttling retried (then accepted, or `failed` 503 at the deadline), a receipt that overtakes
 * its `submit_sm_resp`, a repeated receipt, and texts in both encodings reassembled at the SMSC.
 */
import { capSplit } from "../../../src/provider/smpp/SlidingRate.ts"
import { afterAll, afterEach, beforeAll, expect } from "@effect/vitest"
import { Effect } from "effect"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { Ledger } from "../../../src/ledger/Ledger.ts"
import { ordinaryNumbers, postBatch, withOffset } from "../../batches/support.ts"
import { eventuallyEffect } from "../../support/Eventually.ts"
import { create } from "../../support/Messages.ts"
import { App, backend, withApp } from "../../support/TestApp.ts"
import { credits, isFinal, type MessageFacts, settled, smppApp, submitsAt } from "./service.ts"
import { routeTo, startSmsc } from "./support.ts"

const window = 4
const mps = 20
const responseTimeoutMs = 3000

let smsc: Smsc

beforeAll(async () => {
  smsc = await startSmsc()
})
afterEach(() => {
  smsc.responseDelayMs = 0
  smsc.receiptBeforeResponse = false
  smsc.duplicateReceipts = false
  smsc.throttleNext(0)
})
afterAll(async () => {
  await smsc?.dispose()
})

/** A batch of `recipients` due at the next whole second at least `inMs` ahead (send_at is written without milliseconds). */
const sendBatch = (apiKey: string, recipients: ReadonlyArray<string>, text: string, inMs = 1000) =>
  Effect.gen(function* () {
    const app = yield* App
    const sendAt = Math.ceil(((yield* app.now) + inMs) / 1000) * 1000
    const reply = yield* postBatch(apiKey, { recipients, text, send_at: withOffset(new Date(sendAt), "+03:00") })
    expect(reply.status, reply.text).toBe(202)
    return reply.body.id as string
  })

const ledgerTotals = (orgId: string) =>
  Effect.gen(function* () {
    return yield* (yield* Ledger).totals(orgId)
  })

/** The one message the organisation sent. */
const only = (facts: ReadonlyMap<string, MessageFacts>): MessageFacts => {
  expect(facts.size).toBe(1)
  return [...facts.values()][0]!
}

withApp(smppApp("smpp_flow", () => [routeTo(smsc, { window, mps })], { responseTimeoutMs }))(
  `the SMPP path under service load (${backend})`,
  (it) => {
    it.effect(
      "an SMSC restart mid-load: in flight ends unknown (never resent), then matched by its receipt if the SMSC took it; queued is sent after the reconnection; nothing lost, credits exact",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 50 })
          smsc.responseDelayMs = 150
          const recipients = ordinaryNumbers(20, 1000)
          const text = "restart under load"
          const receivedBefore = smsc.received.length
          const bindsBefore = smsc.binds
          yield* sendBatch(apiKey, recipients, text)
          // some answered, the window (1 under the cap of 20: capSplit) in flight: then the SMSC goes away and comes back
          yield* eventuallyEffect(
            Effect.sync(() => smsc.received.length - receivedBefore),
            (n) => n >= window + 2,
            { intervalMs: 5, what: "a window and more at the SMSC" }
          )
          yield* Effect.promise(() => smsc.stop())
          // read once it is down: a submit_sm may reach it between a read and the stop
          const sentBeforeStop = new Set(smsc.received.slice(receivedBefore).map((r) => r.to))
          yield* Effect.promise(() => smsc.restart())

          const takenBySmsc = (to: string) => smsc.messages.some((m) => m.to === to && m.text === text)
          const facts = [
            ...(yield* settled(orgId, (m) => isFinal(m.status) || (m.status === "unknown" && !takenBySmsc(m.to)), {
              what: "every message final, or unknown and never taken by the SMSC"
            })).values()
          ]
          expect(smsc.binds).toBe(bindsBefore + 1)
          const byStatus = (status: string) => facts.filter((m) => m.status === status)
          // what was in flight when the connection dropped became unknown (written, though the SMSC may
          // not have read it before it went down) and was never written again; the SMSC's receipt
          // proved those it had taken (matched by route, number and submit date): delivered, credits
          // spent; the others stay unknown, credits held
          const inFlight = facts.filter((m) => m.transitions.includes("processing>unknown@provider"))
          expect(inFlight.length).toBeGreaterThan(0)
          for (const m of inFlight) {
            const matched = [
              "->scheduled@admission",
              "scheduled>processing@dispatch",
              "processing>unknown@provider",
              "unknown>accepted@matched_receipt",
              "accepted>delivered@receipt"
            ]
            if (takenBySmsc(m.to)) {
              expect(m.transitions, m.to).toEqual(matched)
              expect(m.credits, m.to).toEqual(credits.consumed)
            } else {
              expect(m.transitions, m.to).toEqual(matched.slice(0, 3))
              expect(m.credits, m.to).toEqual(credits.reserved)
            }
          }
          // what was queued behind the window went after the reconnection, and was delivered
          const afterRestart = byStatus("delivered").filter((m) => !sentBeforeStop.has(m.to))
          expect(afterRestart.length).toBeGreaterThan(0)
          for (const m of byStatus("delivered")) expect(m.credits, m.to).toEqual(credits.consumed)
          // nothing else: no message stuck, none lost, none sent twice, each handed to the provider once
          expect(facts.length).toBe(recipients.length)
          expect(facts.filter((m) => m.status !== "delivered" && m.status !== "unknown")).toEqual([])
          for (const m of facts) {
            expect(submitsAt(smsc, m.to, text), m.to).toBe(m.status === "unknown" && !sentBeforeStop.has(m.to) ? 0 : 1)
            expect(app.calls.submits.get(m.id), m.to).toBe(1)
          }
          const consumed = byStatus("delivered").length
          const reserved = byStatus("unknown").length
          expect(yield* ledgerTotals(orgId)).toEqual({
            granted: 50,
            consumed,
            reserved,
            available: 50 - consumed - reserved,
            expiredUnreserved: 0
          })
        })
    )

    it.effect(
      "holds the window and the MPS cap under load, as measured at the SMSC, and still delivers every message",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 30 })
          // answers quick enough that the window alone would let 100 a second through: the cap must hold them
          smsc.responseDelayMs = 10
          smsc.maxOutstanding = 0
          smsc.maxPerSecond = 0
          const recipients = ordinaryNumbers(30, 2000)
          const text = "window and cap"
          // immediate sends, all at once: dispatched (scheduled) messages are paced evenly at the cap
          // (Provider.pace), so only immediate sends arrive faster than the window drains
          const replies = yield* Effect.all(
            recipients.map((to) => create(apiKey, { to, text })),
            { concurrency: "unbounded" }
          )
          expect(replies.map((r) => r.reply.status)).toEqual(recipients.map(() => 201))
          const facts = yield* settled(orgId, (m) => m.status === "delivered", { what: "every message delivered" })
          expect(facts.size).toBe(30)
          // the window the cap leaves (capSplit: 1 of 4) filled and was never exceeded; the rate (19 in
          // any 1 s) was reached, and the SMSC never counted more than the cap
          const { inFlight, perSecond } = capSplit(mps, window)
          expect(smsc.maxOutstanding).toBe(inFlight)
          expect(smsc.maxPerSecond).toBeGreaterThanOrEqual(perSecond)
          expect(smsc.maxPerSecond).toBeLessThanOrEqual(mps)
          const times = smsc.received.filter((r) => r.text === text)
          expect(times.length).toBe(30)
        })
    )

    it.effect(
      "retries a throttled submission: accepted once the SMSC takes it (201, delivered), failed 503 when throttling lasts until the deadline",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
          smsc.throttleNext(3)
          const taken = yield* create(apiKey, { to: "+261331230001", text: "throttled thrice" })
          expect(taken.reply.status, taken.reply.text).toBe(201)
          expect(submitsAt(smsc, "+261331230001", "throttled thrice")).toBe(4)

          smsc.throttleNext(1_000_000)
          const started = performance.now()
          const refused = yield* create(apiKey, { to: "+261331230002", text: "throttled for good" })
          expect({
            status: refused.reply.status,
            code: refused.reply.body.error?.code,
            id: refused.reply.body.message_id
          }).toEqual({ status: 503, code: "dispatch_unavailable", id: refused.id })
          // retried while a quarter of the timeout was left for an answer
          expect(performance.now() - started).toBeGreaterThan(responseTimeoutMs / 2)
          expect(submitsAt(smsc, "+261331230002", "throttled for good")).toBeGreaterThan(2)

          const facts = yield* settled(orgId, (m) => m.status === "delivered" || m.status === "failed")
          expect(facts.get(taken.id)).toMatchObject({ status: "delivered", credits: credits.consumed })
          expect(facts.get(refused.id)).toMatchObject({
            status: "failed",
            transitions: ["->processing@admission", "processing>failed@provider"],
            credits: credits.released
          })
        })
    )

    it.effect("applies a receipt that arrives before its submit_sm_resp: the message ends delivered", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 1 })
        smsc.receiptBeforeResponse = true
        const { reply } = yield* create(apiKey, { to: "+261331230003", text: "receipt first" })
        expect(reply.status, reply.text).toBe(201)
        const m = only(yield* settled(orgId, (m) => m.status === "delivered"))
        expect(m.transitions).toEqual([
          "->processing@admission",
          "processing>accepted@provider",
          "accepted>delivered@receipt"
        ])
        // kept pending until the message could take it, then applied and removed
        expect(m.receipts).toEqual([])
        expect(m.credits).toEqual(credits.consumed)
      })
    )

    it.effect("a repeated receipt changes nothing: ignored, no receipt row kept, one timeline entry", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 1 })
        smsc.duplicateReceipts = true
        const answersBefore = smsc.receiptAnswers.length
        const { reply } = yield* create(apiKey, { to: "+261331230004", text: "receipt twice" })
        expect(reply.status, reply.text).toBe(201)
        const smscId = String(smsc.messages.find((m) => m.text === "receipt twice")!.ids[0])
        // both copies acknowledged, so both were stored (or found stored) before the check
        yield* eventuallyEffect(
          Effect.sync(() => smsc.receiptAnswers.slice(answersBefore).filter((a) => a.id === smscId)),
          (a) => a.length === 2,
          {
            what: "both copies answered"
          }
        )
        expect(
          smsc.receiptAnswers
            .slice(answersBefore)
            .filter((a) => a.id === smscId)
            .map((a) => a.status)
        ).toEqual([0, 0])
        // a copy that came in the same set as the first waits for the next, where it is a repeat: ignored and removed
        const m = only(yield* settled(orgId, (m) => m.status === "delivered" && m.receipts.length === 0))
        expect(m.transitions).toEqual([
          "->processing@admission",
          "processing>accepted@provider",
          "accepted>delivered@receipt"
        ])
      })
    )

    it.effect(
      "sends GSM-7 with escape characters and UCS-2 with emoji in two segments, reassembled at the SMSC to the exact text",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 4 })
          // 30 septets of escape pairs and spaces, 122 letters, then `€` (an escape pair) across septets 152-153:
          // the split comes before it, at 152
          const gsm = `Ref {42} [ok] ~ ^ | \\ ${"a".repeat(122)}€ end of the second part`
          // 66 units, then an emoji (a surrogate pair) across units 66-67: the split comes before it, at 66
          const ucs = `${"ж".repeat(66)}😀 Salama 🎉 tsara 👍🏽 ô`
          const sent = yield* Effect.all(
            [gsm, ucs].map((text) => create(apiKey, { to: "+261331230005", text })),
            { concurrency: "unbounded" }
          )
          for (const { reply } of sent)
            expect({ status: reply.status, segments: reply.body.segments }, reply.text).toEqual({
              status: 201,
              segments: 2
            })
          yield* settled(orgId, (m) => m.status === "delivered")
          const atSmsc = (text: string) =>
            smsc.messages
              .filter((m) => m.text === text)
              .map((m) => ({ parts: m.parts, dataCoding: m.dataCoding, ids: m.ids.length }))
          expect(atSmsc(gsm)).toEqual([{ parts: 2, dataCoding: 0, ids: 2 }])
          expect(atSmsc(ucs)).toEqual([{ parts: 2, dataCoding: 8, ids: 2 }])
          // each part as the SMSC decoded it: cut where docs/decisions.md#segments cuts, no escape or surrogate pair split
          const parts = (prefix: string) =>
            smsc.received.filter((r) => r.concatenation !== undefined && r.text.startsWith(prefix)).map((r) => r.text)
          expect(parts("Ref {42}")).toEqual([gsm.slice(0, gsm.indexOf("€"))])
          expect(parts("€ end")).toEqual([gsm.slice(gsm.indexOf("€"))])
          expect(parts("жжж")).toEqual(["ж".repeat(66)])
          expect(parts("😀")).toEqual([ucs.slice(66)])
        })
    )
  }
)
