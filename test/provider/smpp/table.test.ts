/**
 * Every row of the SMSC simulator's table (docs/decisions.md#smpp) through the SMPP adapter: the
 * submit result, the late answers reported to the inbox, the receipts reported to the inbox, and
 * what query_sm tells about them.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import type { SubmitResult } from "../../../src/provider/Provider.ts"
import { FakeInbox, routeTo, startSmsc, submission, testSettings, until, withProvider } from "./support.ts"

let smsc: Smsc
beforeEach(async () => {
  smsc = await startSmsc({ slowMs: 400, lateMs: 2000 })
})
afterEach(() => smsc.dispose())

const deadlineMs = 1200

describe("the SMSC table through the adapter", () => {
  it("gives each recipient its result, late answers and receipts", async () => {
    const inbox = new FakeInbox()
    const numbers = Object.values(testNumbers)
    const sent = numbers.map((to) => submission(to, `row ${to}`))
    const { results, elapsedMs, queries } = await withProvider(
      testSettings([routeTo(smsc)], { responseTimeoutMs: deadlineMs }),
      inbox,
      (p) =>
        Effect.gen(function* () {
          const timed = yield* Effect.forEach(
            sent,
            (s) =>
              Effect.gen(function* () {
                const start = performance.now()
                const result = yield* p.submit(s)
                return { result, ms: performance.now() - start }
              }),
            { concurrency: "unbounded" }
          )
          // 4's late acceptance and 8's late refusal, then the receipts of 1, 2, 4 and 7
          yield* until("two late answers", () => inbox.lateResults.length === 2)
          yield* until("four receipts", () => inbox.receipts.length === 4)
          const late4 = inbox.lateResults.find((l) => l.messageId === sent[3]!.messageId)!.result
          const ref4 = late4._tag === "Accepted" ? late4.providerRef : null
          const queries = {
            late4: yield* p.query({ ...sent[3]!, providerRef: ref4 }),
            unknownRef: yield* p.query({ ...sent[0]!, providerRef: "smsc:4242" }),
            withoutRef: yield* p.query({ ...sent[8]!, providerRef: null }),
            otherRoute: yield* p.query({ ...sent[0]!, providerRef: "elsewhere:1" })
          }
          return { results: timed.map((t) => t.result), elapsedMs: timed.map((t) => t.ms), queries }
        })
    )

    const [
      delivered,
      undeliverable,
      rejected,
      unknownThenAccepted,
      unreachable,
      noReceipt,
      slow,
      neverReceived,
      forGood
    ] = results as [
      SubmitResult,
      SubmitResult,
      SubmitResult,
      SubmitResult,
      SubmitResult,
      SubmitResult,
      SubmitResult,
      SubmitResult,
      SubmitResult
    ]
    const refOf = (r: SubmitResult): string =>
      r._tag === "Accepted" ? r.providerRef : expect.fail(`not accepted: ${JSON.stringify(r)}`)
    const receiptOf = (ref: string) => inbox.receipts.filter((r) => r.providerRef === ref).map((r) => r.outcome)

    // 1: accepted, delivered
    expect(receiptOf(refOf(delivered))).toEqual(["delivered"])
    expect(refOf(delivered)).toMatch(/^smsc:\d+$/)
    // 2: accepted, undeliverable
    expect(receiptOf(refOf(undeliverable))).toEqual(["undeliverable"])
    // 3: refused, naming the status
    expect(rejected).toEqual({ _tag: "Rejected", reason: "smsc refused it: 0x45 ESME_RSUBMITFAIL" })
    // 4: unknown at the deadline, then accepted late, then delivered; query_sm confirms it
    expect(unknownThenAccepted).toEqual({ _tag: "Unknown", reason: `smsc: no submit_sm_resp within ${deadlineMs} ms` })
    const late4 = inbox.lateResults.find((l) => l.messageId === sent[3]!.messageId)!
    expect(late4.organisationId).toBe("org-1")
    expect(late4.result._tag).toBe("Accepted")
    const ref4 = late4.result._tag === "Accepted" ? late4.result.providerRef : ""
    expect(receiptOf(ref4)).toEqual(["delivered"])
    expect(queries.late4).toEqual({ _tag: "Accepted", providerRef: ref4 })
    // 5: throttled every time: retried while a quarter of the deadline was left for an answer,
    // then unreachable; never taken
    expect(unreachable).toEqual({
      _tag: "Unreachable",
      reason: "smsc throttled it (0x58 ESME_RTHROTTLED) until the response deadline"
    })
    expect(elapsedMs[4]!).toBeGreaterThan(deadlineMs / 2)
    expect(elapsedMs[4]!).toBeLessThan(deadlineMs + 1000)
    expect(smsc.submitsOfText(sent[4]!.text)).toBeGreaterThan(2)
    // 6: accepted, and no receipt (its receipt would have come with 1's, due at the same time)
    expect(receiptOf(refOf(noReceipt))).toEqual([])
    // 7: accepted after the slow delay, delivered
    expect(elapsedMs[6]!).toBeGreaterThanOrEqual(390)
    expect(receiptOf(refOf(slow))).toEqual(["delivered"])
    // 8: unknown, then the late refusal proves it was never taken
    expect(neverReceived._tag).toBe("Unknown")
    expect(inbox.lateResults.find((l) => l.messageId === sent[7]!.messageId)!.result).toEqual({
      _tag: "Rejected",
      reason: "smsc answered after the deadline: 0x08 ESME_RSYSERR"
    })
    // 9: unknown for good: no late answer at all
    expect(forGood._tag).toBe("Unknown")
    expect(inbox.lateResults.some((l) => l.messageId === sent[8]!.messageId)).toBe(false)
    // query_sm: an id the SMSC does not know is NotReceived; without a ref or a known route, Unknown
    expect(queries.unknownRef).toEqual({
      _tag: "NotReceived",
      reason: "smsc does not know message 4242: 0x67 ESME_RQUERYFAIL"
    })
    expect(queries.withoutRef).toEqual({ _tag: "Unknown" })
    expect(queries.otherRoute).toEqual({ _tag: "Unknown" })
    // nothing was ever sent twice, throttled retries aside
    for (const s of sent.filter((_, i) => i !== 4)) expect(smsc.submitsOfText(s.text), s.to).toBe(1)
  })
})
