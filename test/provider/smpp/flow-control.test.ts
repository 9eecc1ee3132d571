/**
 * The adapter's flow control, measured at the SMSC: the window (most submit_sm awaiting their
 * answer on the connection), the MPS cap (most submit_sm in any 1 s window, a two-part message
 * counting two) and throttling (retried with backoff, then Unreachable at the deadline).
 */
import { capSplit } from "../../../src/provider/smpp/SlidingRate.ts"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { FakeInbox, routeTo, startSmsc, submission, testSettings, withProvider } from "./support.ts"

let smsc: Smsc
beforeEach(async () => {
  smsc = await startSmsc()
})
afterEach(() => smsc.dispose())

const ordinary = (i: number): string => `+2613400${String(10000 + i).slice(1)}0`

describe("window", () => {
  it("never has more than `window` submit_sm awaiting their answer, and fills it", async () => {
    smsc.responseDelayMs = 80
    const sent = Array.from({ length: 30 }, (_, i) => submission(ordinary(i), `window ${i}`))
    const results = await withProvider(
      testSettings([routeTo(smsc, { window: 3 })], { responseTimeoutMs: 5000 }),
      new FakeInbox(),
      (p) => Effect.forEach(sent, (s) => p.submit(s), { concurrency: "unbounded" })
    )
    expect(results.map((r) => r._tag)).toEqual(sent.map(() => "Accepted"))
    expect(smsc.maxOutstanding).toBe(3)
  })
})

describe("MPS cap", () => {
  it("never lets the SMSC count more than `mps` submit_sm in a second (capSplit), a two-part message counting two", async () => {
    const single = Array.from({ length: 8 }, (_, i) => submission(ordinary(i), `mps ${i}`))
    const double = Array.from({ length: 2 }, (_, i) => submission(ordinary(20 + i), `${"long ".repeat(40)}${i}`))
    const start = performance.now()
    const results = await withProvider(
      testSettings([routeTo(smsc, { mps: 4 })], { responseTimeoutMs: 8000 }),
      new FakeInbox(),
      (p) => Effect.forEach([...single, ...double], (s) => p.submit(s), { concurrency: "unbounded" })
    )
    const elapsedMs = performance.now() - start
    expect(results.map((r) => r._tag)).toEqual([...single, ...double].map(() => "Accepted"))
    expect(smsc.received).toHaveLength(12)
    // a cap of 4 is 1 awaiting its answer and 3 written in any 1 s (capSplit): the SMSC counts
    // at least the 3 and never more than the cap
    const { inFlight, perSecond } = capSplit(4, 10)
    expect(smsc.maxOutstanding).toBe(inFlight)
    expect(smsc.maxPerSecond).toBeGreaterThanOrEqual(perSecond)
    expect(smsc.maxPerSecond).toBeLessThanOrEqual(4)
    // 12 submit_sm at 3 in any 1 s: the 10th cannot go before 3 s
    expect(elapsedMs).toBeGreaterThan(3000)
  })
})

describe("throttling", () => {
  it("retries a throttled submission with backoff and takes the answer that comes", async () => {
    smsc.throttleNext(3)
    const s = submission(ordinary(1), "throttled three times")
    const result = await withProvider(testSettings([routeTo(smsc)]), new FakeInbox(), (p) => p.submit(s))
    expect(result._tag).toBe("Accepted")
    expect(smsc.submitsOfText(s.text)).toBe(4)
    expect(smsc.messages.filter((m) => m.text === s.text)).toHaveLength(1)
  })

  it("answers Unreachable (never Rejected) when throttling lasts until the deadline", async () => {
    smsc.throttleNext(1000)
    const s = submission(ordinary(2), "throttled for good")
    const start = performance.now()
    const result = await withProvider(testSettings([routeTo(smsc)], { responseTimeoutMs: 800 }), new FakeInbox(), (p) =>
      p.submit(s)
    )
    const elapsedMs = performance.now() - start
    expect(result).toEqual({
      _tag: "Unreachable",
      reason: "smsc throttled it (0x58 ESME_RTHROTTLED) until the response deadline"
    })
    expect(elapsedMs).toBeLessThan(800 + 1000)
    expect(smsc.messages).toHaveLength(0)
  })
})
