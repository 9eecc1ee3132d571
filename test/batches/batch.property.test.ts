/**
 * Property tests of batches on the service's test clock (docs/integrators.md#batches,
 * 5): over random batches (1 to 1000 recipients, random mixes of the simulator's test numbers and
 * ordinary numbers, one or two segments),
 *  - paging while statuses change between pages (receipts and verifications falling due as the
 *    clock steps) yields every recipient exactly once, in submitted order;
 *  - once dispatched, every member has its contract outcome, the batch counts equal the members'
 *    individual statuses, and the ledger holds segments x members in scheduled/processing/unknown
 *    as reserved and segments x members in accepted/delivered/undeliverable as consumed.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { App, type AppServices, backend, withApp } from "../support/TestApp.ts"
import {
  countsOf,
  expectAdmitted,
  expectedFinal,
  getBalance,
  getBatch,
  getPage,
  membersOf,
  type MessageBody,
  oneSegmentText,
  ordinaryNumbers,
  postBatch,
  testNumberOutcomes,
  twoSegmentText,
  withOffset,
  zeroCounts
} from "./support.ts"

const testNumbers = testNumberOutcomes.map(([n]) => n)

interface BatchCase {
  readonly recipients: ReadonlyArray<string>
  readonly segments: 1 | 2
  /** Spare credits beyond what the batch needs. */
  readonly spare: number
  /** Clock steps taken before each page read while paging (cycled). */
  readonly gaps: ReadonlyArray<number>
}

/** A small deterministic PRNG for the shuffle (the seed is what fast-check generates). */
const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const shuffle = <A>(items: ReadonlyArray<A>, seed: number): Array<A> => {
  const out = [...items]
  const random = mulberry32(seed)
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** Sizes biased small, with a few large ones up to the 1000 limit. */
const sizeArb = fc.oneof(
  { weight: 14, arbitrary: fc.integer({ min: 1, max: 20 }) },
  { weight: 4, arbitrary: fc.integer({ min: 21, max: 150 }) },
  { weight: 2, arbitrary: fc.integer({ min: 151, max: 400 }) },
  { weight: 1, arbitrary: fc.integer({ min: 401, max: 1000 }) }
)

const batchArb: fc.Arbitrary<BatchCase> = sizeArb.chain((size) =>
  fc
    .record({
      tests: fc.subarray(testNumbers, { maxLength: Math.min(testNumbers.length, size) }),
      base: fc.integer({ min: 0, max: 9_000_000 }),
      seed: fc.integer(),
      segments: fc.constantFrom<1 | 2>(1, 2),
      spare: fc.integer({ min: 0, max: 5 }),
      gaps: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 10 })
    })
    .map(({ tests, base, seed, segments, spare, gaps }) => ({
      recipients: shuffle([...tests, ...ordinaryNumbers(size - tests.length, base)], seed),
      segments,
      spare,
      gaps
    }))
)

/** Pinned cases run first: the largest batch with every test number, and a two-segment mid-size one. */
const pinned: Array<[BatchCase]> = [
  [{ recipients: shuffle([...testNumbers, ...ordinaryNumbers(991, 10)], 1), segments: 1, spare: 0, gaps: [1, 0, 2] }],
  [{ recipients: shuffle([...testNumbers, ...ordinaryNumbers(241, 5000)], 2), segments: 2, spare: 3, gaps: [0, 3] }]
]

const show = (c: BatchCase) =>
  `${c.recipients.length} recipients (${c.recipients.filter((r) => testNumbers.includes(r)).join(", ") || "no test numbers"}), ` +
  `${c.segments} segment(s), spare ${c.spare}, gaps ${JSON.stringify(c.gaps)}`

/** Moves the clock `n` steps of 200 ms (statuses change as receipts and verifications fall due). */
const step = (n: number) => Effect.flatMap(App, (app) => app.advance(200 * n))

/** Paging passes that saw the batch mid-way (some members in their final status, some not yet). */
let passesMidDispatch = 0
const sizesRun: Array<number> = []

/** Reads every page with `gaps` clock steps before each page after the first; checks the paging contract. */
const pageThrough = (apiKey: string, batchId: string, recipients: ReadonlyArray<string>, gaps: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const seen: Array<MessageBody> = []
    let cursor: string | undefined
    let last = false
    for (let page = 0; page < 20 && !last; page++) {
      if (page > 0) yield* step(gaps[page % gaps.length]!)
      const p: { results: Array<MessageBody>; nextCursor: string | null } = yield* getPage(apiKey, batchId, cursor)
      seen.push(...p.results)
      const full = seen.length < recipients.length
      // every page but the last holds exactly 100; the last one says so with a null cursor
      expect(p.results.length).toBe(full ? 100 : recipients.length - (seen.length - p.results.length))
      if (p.nextCursor === null) last = true
      else cursor = p.nextCursor
    }
    expect(last, "a last page with next_cursor null").toBe(true)
    const pending = seen.filter((m) => m.status !== expectedFinal(m.to)).length
    if (pending > 0 && pending < seen.length) passesMidDispatch++
    expect(seen.map((m) => m.to)).toEqual(recipients)
    expect(new Set(seen.map((m) => m.id)).size).toBe(recipients.length)
    return seen
  })

/** For a failure message: each member not in its expected final status, with its timeline. */
const diagnose = (orgId: string, batchId: string) =>
  Effect.gen(function* () {
    const app = yield* App
    const lines: Array<string> = []
    for (const m of yield* membersOf(orgId, batchId)) {
      if (m.status === expectedFinal(m.toNumber)) continue
      const events = (yield* app.timeline(orgId, m.id)).map(
        (e) => `${e.fromStatus ?? "-"}->${e.toStatus} by ${e.source} at ${new Date(e.at).toISOString()}`
      )
      lines.push(
        `${m.toNumber} is ${m.status}, expected ${expectedFinal(m.toNumber)}; submits ${app.calls.submits.get(m.id) ?? 0}; ` +
          `timeline [${events.join("; ")}]`
      )
    }
    return `now ${new Date(yield* app.now).toISOString()}; ${lines.join(" | ")}`
  })

const ledgerTotals = (orgId: string) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    return yield* ledger.totals(orgId)
  })

const checkCase = (c: BatchCase) =>
  Effect.gen(function* () {
    const app = yield* App
    const n = c.recipients.length
    sizesRun.push(n)
    const granted = n * c.segments + c.spare
    const { orgId, apiKey } = yield* app.newOrg({ credits: granted })
    const sendAt = new Date((yield* app.now) + 10 * 60_000)
    const res = yield* postBatch(apiKey, {
      recipients: c.recipients,
      text: c.segments === 1 ? oneSegmentText : twoSegmentText,
      send_at: withOffset(sendAt, "+03:00")
    })
    const batch = expectAdmitted(res)
    expect(batch).toMatchObject({
      recipient_count: n,
      credits_reserved: n * c.segments,
      counts: { ...zeroCounts(), scheduled: n }
    })

    // paging while statuses change: the first page before send_at, the others from send_at on, between clock steps
    const first = yield* getPage(apiKey, batch.id)
    expect(first.results.map((m) => m.to)).toEqual(c.recipients.slice(0, 100))
    yield* app.advanceTo(sendAt)
    const expected = countsOf(c.recipients.map(expectedFinal))
    let counts = zeroCounts()
    for (let pass = 0; pass < 60; pass++) {
      yield* pageThrough(apiKey, batch.id, c.recipients, c.gaps)
      counts = (yield* getBatch(apiKey, batch.id)).counts
      if (JSON.stringify(counts) === JSON.stringify(expected)) break
      yield* step(2)
    }
    if (JSON.stringify(counts) !== JSON.stringify(expected)) {
      yield* app.advance(10 * 60_000)
      counts = (yield* getBatch(apiKey, batch.id)).counts
    }
    if (JSON.stringify(counts) !== JSON.stringify(expected)) {
      expect(counts, `batch counts once dispatched; ${yield* diagnose(orgId, batch.id)}`).toEqual(expected)
    }

    // the counts are the members' individual statuses; each member has its contract outcome
    const members = yield* pageThrough(apiKey, batch.id, c.recipients, [0])
    expect(countsOf(members.map((m) => m.status))).toEqual(counts)
    expect(members.map((m) => m.status)).toEqual(c.recipients.map(expectedFinal))
    const stored = yield* membersOf(orgId, batch.id)
    expect(stored.map((m) => [m.id, m.status])).toEqual(members.map((m) => [m.id, m.status]))
    for (const m of members) {
      if (app.calls.submits.get(m.id) !== 1)
        expect(`${m.to} submitted ${app.calls.submits.get(m.id) ?? 0} times`).toBe(`${m.to} submitted 1 times`)
    }

    // docs/decisions.md#credits, member by member
    const reserved = c.segments * (counts.scheduled + counts.processing + counts.unknown)
    const consumed = c.segments * (counts.accepted + counts.delivered + counts.undeliverable)
    expect(yield* ledgerTotals(orgId)).toEqual({
      granted,
      consumed,
      reserved,
      available: granted - consumed - reserved,
      expiredUnreserved: 0
    })
    expect(yield* getBalance(apiKey)).toEqual({
      total: granted - consumed,
      reserved,
      available: granted - consumed - reserved,
      valid_until: null
    })
  })

// shorter (still realistic) simulator and verification delays keep each run brief in clock time
withApp({
  label: "batch_property",
  config: { clock: "test", simulatorReceiptDelayMs: 500, simulatorSlowMs: 0, verifyIntervalMs: 1000 }
})(`batch properties on the test clock (${backend})`, (it) => {
  it.effect(
    "random batches: paging yields every recipient once in order while statuses change; counts and credits settle per contract",
    () =>
      Effect.gen(function* () {
        // fast-check runs each case as a promise: the case's Effect runs with the suite's app
        const run = Effect.runPromiseWith(yield* Effect.context<App | AppServices>())
        const details = yield* Effect.promise(() =>
          fc.check(
            fc.asyncProperty(batchArb, async (c) => {
              await run(checkCase(c))
            }),
            { numRuns: 25, examples: pinned, endOnFailure: true }
          )
        )
        if (details.failed) {
          const [c] = details.counterexample ?? []
          const error =
            details.errorInstance instanceof Error ? details.errorInstance : new Error(String(details.errorInstance))
          error.message =
            `property failed (seed ${details.seed}, path ${details.counterexamplePath}) on ` +
            `${c === undefined ? "?" : show(c)}: ${error.message}\nrecipients: ${JSON.stringify(c?.recipients)}`
          throw error
        }
        // not vacuous: some passes really paged while statuses were changing
        expect(passesMidDispatch).toBeGreaterThan(0)
        console.log(`batch sizes run: ${sizesRun.join(", ")}; paging passes mid-dispatch: ${passesMidDispatch}`)
      }),
    240_000
  )
})
