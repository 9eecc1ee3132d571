/**
 * Tests that need a real PostgreSQL server: the embedded PGlite serves one connection at a
 * time, so nothing there ever runs concurrently. Without DATABASE_URL they are skipped, and the
 * skipped block's name says why.
 *
 * (a) 50 identical POSTs racing on one Idempotency-Key (the slow test number keeps the first
 *     one in flight): one message, one reservation, one provider submission; every other
 *     answer replays the 201 or is 409 idempotency_in_progress.
 * (b) Two service processes (two whole apps, each with its background fibers) on one database
 *     draining 1000 due messages: both take part, each message goes to the provider exactly
 *     once and ends accepted, the timeline and the ledger account for every one.
 */
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testNumbers } from "../../simulator/Simulator.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { now } from "../../src/Time.ts"
import { eventually } from "../support/Eventually.ts"
import { createScratchDatabase } from "../support/ScratchDatabase.ts"
import { makeTestApp, type TestApp } from "../support/TestApp.ts"

const databaseUrl = process.env.DATABASE_URL
const dueCount = 1000

describe.skipIf(!databaseUrl)("needs PostgreSQL (set DATABASE_URL; the embedded PGlite serves one connection at a time)", () => {
  describe("(a) 50 identical concurrent POSTs on the slow number", () => {
    const app = makeTestApp({ config: { simulatorSlowMs: 300 } })
    afterAll(() => app.dispose())

    it("create one message, one reservation, one submission; the rest replay the 201 or answer 409 in progress", async () => {
      const { orgId, apiKey } = await app.newOrg({ credits: 10, permissions: ["sms.send"] })
      const key = `race-${randomUUID()}`
      const body = { to: testNumbers.slow, text: "Fifty doors, one message" }
      const post = () => app.call("POST", "/api/sms/v2/messages/", { token: apiKey, headers: { "idempotency-key": key }, body })

      const replies = await Promise.all(Array.from({ length: 50 }, post))

      const fresh = replies.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null)
      expect(fresh.length, replies.map((r) => `${r.status} ${r.text}`).join("\n")).toBe(1)
      const first = fresh[0]!
      expect(first.body.status).toBe("accepted")
      for (const r of replies) {
        if (r === first) continue
        if (r.status === 201) {
          expect(r.headers.get("idempotent-replayed"), "a second 201 is a replay").toBe("true")
          expect(r.body, "the replay is the first answer").toEqual(first.body)
          expect(r.headers.get("location")).toBe(first.headers.get("location"))
        } else {
          expect({ status: r.status, code: r.body?.error?.code }, r.text).toEqual({ status: 409, code: "idempotency_in_progress" })
        }
      }
      // after the race the key is done: an identical retry replays
      const after = await post()
      expect({ status: after.status, replayed: after.headers.get("idempotent-replayed"), body: after.body })
        .toEqual({ status: 201, replayed: "true", body: first.body })

      const facts = await app.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const messages = yield* sql<{ id: string; segments: number; status: string }>`SELECT id::text AS id,
            segments::integer AS segments, status FROM messages WHERE organisation_id = ${orgId}`
        const holds = yield* sql<{ messageId: string; amount: number; state: string }>`SELECT message_id::text AS message_id,
            amount, state FROM credit_holds WHERE organisation_id = ${orgId}`
        const reserves = yield* sql<{ n: number }>`SELECT count(*)::integer AS n FROM credit_entries
          WHERE organisation_id = ${orgId} AND kind = 'reserve'`
        const totals = yield* (yield* Ledger).totals(orgId)
        return { messages, holds, reserves: reserves[0]!.n, totals }
      }))
      expect(facts.messages.length, "message rows of the organisation").toBe(1)
      const message = facts.messages[0]!
      expect(message.id).toBe(first.body.id)
      expect(facts.holds.map((h) => h.messageId), "credit_holds rows").toEqual([message.id])
      expect(facts.holds[0]!.amount).toBe(message.segments)
      expect(facts.reserves, "reserve entries").toBe(1)
      expect(facts.totals.reserved + facts.totals.consumed, "reserved + consumed").toBe(message.segments)
      expect(facts.totals.consumed + facts.totals.reserved + facts.totals.available + facts.totals.expiredUnreserved)
        .toBe(facts.totals.granted)
      expect(app.calls.submits.get(message.id), "provider submissions").toBe(1)
      expect(app.calls.submits.size, "nothing else submitted").toBe(1)
    }, 60_000)
  })

  describe("(b) two processes over 1000 due messages", () => {
    let drop: () => Promise<void> = async () => {}
    let apps: ReadonlyArray<TestApp> = []
    beforeAll(async () => {
      const scratch = await createScratchDatabase("two_processes")
      drop = scratch.drop
      const config = { databaseUrl: Redacted.make(scratch.url), schedulerEnabled: true, simulatorReceiptDelayMs: 500 }
      apps = [makeTestApp({ config }), makeTestApp({ config })]
    })
    afterAll(async () => {
      await Promise.all(apps.map((a) => a.dispose()))
      await drop()
    })

    it("both take part; each message is submitted exactly once and ends accepted or delivered", async () => {
      const [a, b] = apps as [TestApp, TestApp]
      const { orgId } = await a.newOrg({ credits: dueCount })
      await b.call("GET", "/health")
      // admitted as a batch would be, due two seconds from now
      const ids = await a.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* MessageStore
        const ledger = yield* Ledger
        const at = yield* now
        const sendAt = new Date(at.getTime() + 2_000)
        const ids: Array<string> = Array.from({ length: dueCount }, () => randomUUID())
        yield* Effect.gen(function*() {
          yield* store.insert(orgId, ids.map((id, i) => ({
            id,
            batchId: null,
            batchPosition: null,
            toNumber: i % 2 === 0 ? "+261341234567" : testNumbers.acceptedNoReceipt,
            senderName: "INFO",
            text: `Due message ${i}`,
            segments: 1,
            status: "scheduled" as const,
            sendAt,
            workerId: null
          })), at)
          yield* ledger.reserve(orgId, ids.map((messageId) => ({ messageId, credits: 1 })))
        }).pipe(sql.withTransaction)
        return ids
      }))

      const statuses = () =>
        a.run(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ status: string; n: number }>`SELECT status, count(*)::integer AS n FROM messages
            WHERE organisation_id = ${orgId} GROUP BY status ORDER BY status`
        }))
      const settled = ["accepted", "delivered"]
      const final = await eventually(statuses, (rows) => rows.every((r) => settled.includes(r.status)), {
        timeoutMs: 60_000,
        what: "every due message accepted"
      })
      expect(final.reduce((n, r) => n + r.n, 0)).toBe(dueCount)

      const byA = ids.filter((id) => a.calls.submits.has(id))
      const byB = ids.filter((id) => b.calls.submits.has(id))
      expect(byA.length, "process A submitted some").toBeGreaterThan(0)
      expect(byB.length, "process B submitted some").toBeGreaterThan(0)
      expect(byA.filter((id) => b.calls.submits.has(id)), "submitted by both").toEqual([])
      expect(byA.length + byB.length, "every message submitted").toBe(dueCount)
      expect(ids.filter((id) => (a.calls.submits.get(id) ?? 0) + (b.calls.submits.get(id) ?? 0) !== 1), "not submitted exactly once")
        .toEqual([])

      const facts = await a.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [events] = yield* sql<{ dispatched: number; provider: number }>`SELECT
            count(DISTINCT message_id) FILTER (WHERE from_status = 'scheduled' AND to_status = 'processing')::integer AS dispatched,
            (count(*) FILTER (WHERE source = 'provider'))::integer AS provider
          FROM message_events WHERE organisation_id = ${orgId}`
        return { events, totals: yield* (yield* Ledger).totals(orgId) }
      }))
      expect(facts.events, "timeline: one dispatch and one provider answer each").toEqual({ dispatched: dueCount, provider: dueCount })
      expect({ consumed: facts.totals.consumed, reserved: facts.totals.reserved, available: facts.totals.available })
        .toEqual({ consumed: dueCount, reserved: 0, available: 0 })
    }, 120_000)
  })
})
