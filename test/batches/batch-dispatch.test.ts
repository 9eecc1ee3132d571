/**
 * Batches after their send time (docs/integrators.md#batches): every member meets the
 * simulator outcome of its number, the batch counts equal the members' individual statuses,
 * credits settle member by member, and a replay of the creation answers the original 202 without
 * sending anything again. On the service's test clock, and once with the background fibers
 * running for real and receipts as fast as the provider can send them.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { eventuallyEffect } from "../support/Eventually.ts"
import { App, backend, withApp } from "../support/TestApp.ts"
import {
  countsOf,
  expectAdmitted,
  expectedFinal,
  getBalance,
  getBatch,
  membersOf,
  ordinaryNumbers,
  postBatch,
  readAll,
  type Status,
  testNumberOutcomes,
  twoSegmentText,
  withOffset,
  zeroCounts
} from "./support.ts"

// each describe block runs its own app (scratch database): they never run at the same time

const hour = 3_600_000

/** The nine simulator test numbers interleaved with `ordinary` ordinary numbers. */
const mixed = (ordinary: number, base: number) => {
  const others = ordinaryNumbers(ordinary, base)
  const out: Array<string> = []
  const tests = testNumberOutcomes.map(([n]) => n)
  while (others.length > 0 || tests.length > 0) {
    if (others.length > 0) out.push(others.shift()!)
    if (tests.length > 0) out.push(tests.shift()!)
  }
  return out
}

/** Admits a batch due in `dueInMs` (one hour by default); returns its request, key and 202 body. */
const admit = (
  apiKey: string,
  recipients: ReadonlyArray<string>,
  extra: Record<string, unknown> = {},
  dueInMs = hour
) =>
  Effect.gen(function* () {
    const app = yield* App
    const request = {
      recipients,
      text: twoSegmentText,
      send_at: withOffset(new Date((yield* app.now) + dueInMs), "+03:00"),
      ...extra
    }
    const key = `batch-${crypto.randomUUID()}`
    const res = yield* postBatch(apiKey, request, key)
    const batch = expectAdmitted(res)
    expect(batch.counts).toEqual({ ...zeroCounts(), scheduled: recipients.length })
    return { request, key, batch, location: res.headers.get("location") }
  })

/** Moves the clock past every receipt and several verifications, then expects the batch's counts. */
const settle = (apiKey: string, batchId: string, expected: Record<Status, number>) =>
  Effect.gen(function* () {
    const app = yield* App
    yield* app.advance(60_000)
    const counts = (yield* getBatch(apiKey, batchId)).counts
    expect(counts).toEqual(expected)
    return counts
  })

const members = (orgId: string, batchId: string) => membersOf(orgId, batchId)

const ledgerTotals = (orgId: string) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    return yield* ledger.totals(orgId)
  })

withApp({ label: "batch_dispatch", config: { clock: "test" } })(
  `batch dispatch on the test clock (${backend})`,
  (it) => {
    it.effect("nothing is dispatched before send_at", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 50 })
        const { batch } = yield* admit(apiKey, mixed(3, 100))
        yield* app.advanceTo(new Date(batch.send_at).getTime() - 1)
        expect((yield* getBatch(apiKey, batch.id)).counts).toEqual({ ...zeroCounts(), scheduled: 12 })
        expect((yield* members(orgId, batch.id)).every((m) => !app.calls.submits.has(m.id))).toBe(true)
        expect(yield* getBalance(apiKey)).toMatchObject({ total: 50, reserved: 24, available: 26 })
      })
    )

    it.effect(
      "after send_at every member meets its contract outcome, the counts equal the members' statuses, credits settle per member",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 100 })
          const recipients = mixed(6, 200)
          const { batch } = yield* admit(apiKey, recipients)
          expect(batch.credits_reserved).toBe(30)
          const expected = countsOf(recipients.map(expectedFinal))
          expect(expected).toEqual({
            ...zeroCounts(),
            delivered: 9,
            undeliverable: 1,
            accepted: 1,
            failed: 3,
            unknown: 1
          })

          yield* app.advance(hour)
          const counts = yield* settle(apiKey, batch.id, expected)

          // the counts are the members' own statuses, read through the list endpoint and the store
          const { messages } = yield* readAll(apiKey, batch.id)
          expect(messages.map((m) => m.to)).toEqual(recipients)
          expect(countsOf(messages.map((m) => m.status))).toEqual(counts)
          expect(messages.map((m) => [m.to, m.status])).toEqual(recipients.map((to) => [to, expectedFinal(to)]))
          const stored = yield* members(orgId, batch.id)
          expect(stored.map((m) => m.status)).toEqual(messages.map((m) => m.status))
          expect(stored.map((m) => m.id)).toEqual(messages.map((m) => m.id))

          // each member is handed to the provider exactly once
          for (const m of messages) expect(app.calls.submits.get(m.id), m.to).toBe(1)
          for (const m of messages) {
            expect(m.segments).toBe(2)
            expect(new Date(m.send_at!).getTime()).toBe(new Date(batch.send_at).getTime())
            if (m.status === "delivered" || m.status === "undeliverable") expect(m.delivery_time, m.to).not.toBeNull()
            else expect(m.delivery_time, m.to).toBeNull()
          }

          // docs/decisions.md#credits: accepted/delivered/undeliverable consumed, failed/blocked released, unknown reserved
          const consumed = 2 * (counts.accepted + counts.delivered + counts.undeliverable)
          const reserved = 2 * (counts.scheduled + counts.processing + counts.unknown)
          expect({ consumed, reserved }).toEqual({ consumed: 22, reserved: 2 })
          expect(yield* ledgerTotals(orgId)).toEqual({
            granted: 100,
            consumed,
            reserved,
            available: 100 - consumed - reserved,
            expiredUnreserved: 0
          })
          expect(yield* getBalance(apiKey)).toEqual({
            total: 100 - consumed,
            reserved,
            available: 100 - consumed - reserved,
            valid_until: null
          })
          // credits_reserved keeps the initial reservation
          expect((yield* getBatch(apiKey, batch.id)).credits_reserved).toBe(30)
        })
    )

    it.effect(
      "a replay after dispatch returns the original 202 body and reschedules nothing, not even the failed recipients",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 100 })
          const recipients = mixed(2, 300)
          const { request, key, batch, location } = yield* admit(apiKey, recipients)
          yield* app.advance(hour)
          const settled = yield* settle(apiKey, batch.id, countsOf(recipients.map(expectedFinal)))
          const before = yield* members(orgId, batch.id)
          const balanceBefore = yield* getBalance(apiKey)
          const totalsBefore = yield* ledgerTotals(orgId)

          // send_at is now in the past: the replay is still the stored answer, not invalid_schedule
          const replay = yield* postBatch(apiKey, request, key)
          expect(replay.status, replay.text).toBe(202)
          expect(replay.body).toEqual(batch)
          expect(replay.body.counts).toEqual({ ...zeroCounts(), scheduled: recipients.length })
          expect(replay.headers.get("location")).toBe(location)
          expect(replay.headers.get("idempotent-replayed")).toBe("true")

          // time goes on: nothing moves
          yield* app.advance(10 * 60_000)
          const after = yield* members(orgId, batch.id)
          expect(after).toEqual(before)
          for (const m of after) expect(app.calls.submits.get(m.id), m.toNumber).toBe(1)
          const failed = after.filter((m) => m.status === "failed").map((m) => m.toNumber)
          expect(failed.sort()).toEqual(["+261340000003", "+261340000005", "+261340000008"])
          expect((yield* getBatch(apiKey, batch.id)).counts).toEqual(settled)
          expect(yield* getBalance(apiKey)).toEqual(balanceBefore)
          expect(yield* ledgerTotals(orgId)).toEqual(totalsBefore)
          const [{ n }] = yield* Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql<{
              n: number
            }>`SELECT count(*)::integer AS n FROM messages WHERE organisation_id = ${orgId}`
          })
          expect(n).toBe(recipients.length)
        })
    )

    it.effect("a sender deactivated before send_at blocks every member and releases all its credits", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 40 })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: true })).status).toBe(200)
        const recipients = [...ordinaryNumbers(3, 400), "+261340000001", "+261340000003"]
        const { batch } = yield* admit(apiKey, recipients, { sender_name: "PROMO" })
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 10, available: 30 })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: false })).status).toBe(200)
        yield* app.advance(hour)
        yield* settle(apiKey, batch.id, { ...zeroCounts(), blocked: 5 })
        const { messages } = yield* readAll(apiKey, batch.id)
        expect(messages.map((m) => m.status)).toEqual(Array(5).fill("blocked"))
        for (const m of messages) expect(app.calls.submits.has(m.id), m.to).toBe(false)
        expect(yield* getBalance(apiKey)).toEqual({ total: 40, reserved: 0, available: 40, valid_until: null })
        expect(yield* ledgerTotals(orgId)).toEqual({
          granted: 40,
          consumed: 0,
          reserved: 0,
          available: 40,
          expiredUnreserved: 0
        })
      })
    )

    it.effect("SMS disabled for the organisation at send_at fails every member and releases all its credits", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 40 })
        const recipients = [...ordinaryNumbers(2, 500), "+261340000006"]
        const { batch } = yield* admit(apiKey, recipients)
        expect((yield* app.admin("PATCH", `/organizations/${orgId}`, { sms_enabled: false })).status).toBe(200)
        yield* app.advance(hour)
        yield* settle(apiKey, batch.id, { ...zeroCounts(), failed: 3 })
        const { messages } = yield* readAll(apiKey, batch.id)
        for (const m of messages) expect(app.calls.submits.has(m.id), m.to).toBe(false)
        expect(yield* ledgerTotals(orgId)).toEqual({
          granted: 40,
          consumed: 0,
          reserved: 0,
          available: 40,
          expiredUnreserved: 0
        })
      })
    )

    it.effect("a batch larger than one dispatcher claim (230 members) settles completely, counts equal statuses", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 230 })
        const recipients = mixed(221, 600)
        const { batch } = yield* admit(apiKey, recipients, { text: "one segment" })
        yield* app.advance(hour)
        const counts = yield* settle(apiKey, batch.id, countsOf(recipients.map(expectedFinal)))
        const { messages, sizes } = yield* readAll(apiKey, batch.id)
        expect(sizes).toEqual([100, 100, 30])
        expect(messages.map((m) => [m.to, m.status])).toEqual(recipients.map((to) => [to, expectedFinal(to)]))
        expect(countsOf(messages.map((m) => m.status))).toEqual(counts)
        for (const m of messages) expect(app.calls.submits.get(m.id), m.to).toBe(1)
        const consumed = counts.accepted + counts.delivered + counts.undeliverable
        expect(yield* ledgerTotals(orgId)).toEqual({
          granted: 230,
          consumed,
          reserved: counts.unknown,
          available: 230 - consumed - counts.unknown,
          expiredUnreserved: 0
        })
      })
    )
  }
)

// SMS_SIMULATOR_RECEIPT_DELAY_MS=0 (a valid setting): a receipt can arrive while its
// acceptance is still being settled; it must still be applied (docs/decisions.md#the-provider-simulator: delivered)
withApp({
  label: "batch_dispatch",
  config: {
    clock: "system",
    schedulerEnabled: true,
    simulatorReceiptDelayMs: 0,
    simulatorSlowMs: 0,
    verifyIntervalMs: 1000
  }
})(`batch dispatch with the background fibers running and receipts at once (${backend})`, (it) => {
  it.effect("every receipt is applied even when it overtakes the settlement of its acceptance", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 400 })
      const recipients = mixed(291, 800)
      // due in 5 s: send_at must still be in the future when a loaded machine admits the batch
      const { batch } = yield* admit(apiKey, recipients, { text: "one segment" }, 5_000)
      const expected = countsOf(recipients.map(expectedFinal))
      const last = yield* eventuallyEffect(
        getBatch(apiKey, batch.id).pipe(Effect.map((b) => b.counts)),
        (counts) => JSON.stringify(counts) === JSON.stringify(expected),
        { timeoutMs: 30_000, what: "every member in its final status" }
      )
      expect(last).toEqual(expected)
      const stored = yield* members(orgId, batch.id)
      expect(stored.filter((m) => m.status !== expectedFinal(m.toNumber))).toEqual([])
      for (const m of stored) expect(app.calls.submits.get(m.id), m.toNumber).toBe(1)
    })
  )
})
