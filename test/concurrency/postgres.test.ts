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
 * (c) 120 concurrent scheduled admissions of two segments racing for a first lot of 51 credits
 *     with a second lot behind it, and more requests than credits: the one-statement admission
 *     and the general path together admit exactly what the lots fund, each admitted message
 *     holds exactly its two credits (one spans both lots), refusals leave nothing behind, and
 *     the lot counters equal their holds.
 */
import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { now } from "../../src/clock/Time.ts"
import { eventuallyEffect } from "../support/Eventually.ts"
import { createScratchDatabase } from "../support/ScratchDatabase.ts"
import type { AppConfigShape } from "../../src/config/Config.ts"
import { App, withApp } from "../support/TestApp.ts"
import { messageCreditsSql } from "../support/Credits.ts"
import { timelineEntriesSql } from "../support/Timelines.ts"

const databaseUrl = process.env.DATABASE_URL
const dueCount = 1000

describe.skipIf(!databaseUrl)(
  "needs PostgreSQL (set DATABASE_URL; the embedded PGlite serves one connection at a time)",
  () => {
    withApp({ config: { simulatorSlowMs: 300 } })("(a) 50 identical concurrent POSTs on the slow number", (it) => {
      it.effect(
        "create one message, one reservation, one submission; the rest replay the 201 or answer 409 in progress",
        () =>
          Effect.gen(function* () {
            const app = yield* App
            const { orgId, apiKey } = yield* app.newOrg({ credits: 10, permissions: ["sms.send"] })
            const key = `race-${randomUUID()}`
            const body = { to: testNumbers.slow, text: "Fifty doors, one message" }
            const post = () =>
              app.call("POST", "/api/sms/v2/messages/", { token: apiKey, headers: { "idempotency-key": key }, body })

            const replies = yield* Effect.all(Array.from({ length: 50 }, post), { concurrency: "unbounded" })

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
                expect({ status: r.status, code: r.body?.error?.code }, r.text).toEqual({
                  status: 409,
                  code: "idempotency_in_progress"
                })
              }
            }
            // after the race the key is done: an identical retry replays
            const after = yield* post()
            expect({
              status: after.status,
              replayed: after.headers.get("idempotent-replayed"),
              body: after.body
            }).toEqual({ status: 201, replayed: "true", body: first.body })

            const facts = yield* Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const messages = yield* sql<{ id: string; segments: number; status: string }>`SELECT id::text AS id,
              segments::integer AS segments, status FROM messages WHERE organisation_id = ${orgId}`
              // its credits, held or already settled (a settled hold is its consume or release entry)
              const holds = yield* sql<{ messageId: string; amount: number }>`SELECT message_id::text AS message_id,
              pending + posted + voided AS amount FROM (${sql.literal(messageCreditsSql)}) AS c WHERE organisation_id = ${orgId}`
              const reserves = yield* sql<{ n: number }>`SELECT count(*)::integer AS n FROM credit_entries
            WHERE organisation_id = ${orgId} AND kind = 'reserve'`
              const totals = yield* (yield* Ledger).totals(orgId)
              return { messages, holds, reserves: reserves[0]!.n, totals }
            })
            expect(facts.messages.length, "message rows of the organisation").toBe(1)
            const message = facts.messages[0]!
            expect(message.id).toBe(first.body.id)
            expect(
              facts.holds.map((h) => h.messageId),
              "messages holding credits"
            ).toEqual([message.id])
            expect(facts.holds[0]!.amount).toBe(message.segments)
            expect(facts.reserves, "reserve entries").toBe(1)
            expect(facts.totals.reserved + facts.totals.consumed, "reserved + consumed").toBe(message.segments)
            expect(
              facts.totals.consumed + facts.totals.reserved + facts.totals.available + facts.totals.expiredUnreserved
            ).toBe(facts.totals.granted)
            expect(app.calls.submits.get(message.id), "provider submissions").toBe(1)
            expect(app.calls.submits.size, "nothing else submitted").toBe(1)
          }),
        60_000
      )
    })

    withApp()("(c) concurrent admissions racing for the first lot's last credits", (it) => {
      it.effect(
        "admit exactly what the lots fund, all or nothing per message",
        () =>
          Effect.gen(function* () {
            const app = yield* App
            const { orgId, apiKey } = yield* app.newOrg({ credits: 51 })
            expect((yield* app.admin("POST", `/organizations/${orgId}/credits`, { amount: 150 })).status).toBe(201)
            const sendAt = new Date(Date.now() + 86_400_000).toISOString()
            const text = "t".repeat(200) // two segments
            const replies = yield* Effect.all(
              Array.from({ length: 120 }, (_, i) =>
                app.call("POST", "/api/sms/v2/messages/", {
                  token: apiKey,
                  headers: { "idempotency-key": `race-credits-${randomUUID()}` },
                  body: { to: `+26133${String(i).padStart(7, "0")}`, text, send_at: sendAt }
                })
              ),
              { concurrency: "unbounded" }
            )
            const admitted = replies.filter((r) => r.status === 202)
            const refused = replies.filter((r) => r.status !== 202)
            // 201 credits fund 100 two-segment messages
            expect(admitted.length, replies.map((r) => r.status).join(",")).toBe(100)
            for (const r of refused)
              expect({ status: r.status, code: r.body?.error?.code }).toEqual({
                status: 409,
                code: "insufficient_credits"
              })

            const facts = yield* Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const holds = yield* sql<{
                messageId: string
                amount: number
                lots: number
              }>`SELECT message_id::text AS message_id,
              sum(amount)::integer AS amount, count(*)::integer AS lots
            FROM credit_holds WHERE organisation_id = ${orgId} AND state = 'pending' GROUP BY message_id`
              const messages = yield* sql<{
                n: number
              }>`SELECT count(*)::integer AS n FROM messages WHERE organisation_id = ${orgId}`
              const lots = yield* sql<{ reserved: number; held: number }>`SELECT l.reserved,
              coalesce((SELECT sum(h.amount) FROM credit_holds h WHERE h.organisation_id = l.organisation_id AND h.lot_id = l.id
                AND h.state = 'pending'), 0)::integer AS held
            FROM credit_lots l WHERE l.organisation_id = ${orgId} ORDER BY l.id`
              return { holds, messages: messages[0]!.n, lots, totals: yield* (yield* Ledger).totals(orgId) }
            })
            expect(facts.messages).toBe(100)
            expect(facts.holds.length).toBe(100)
            expect(
              facts.holds.filter((h) => h.amount !== 2),
              "messages not holding exactly two credits"
            ).toEqual([])
            expect(facts.holds.filter((h) => h.lots === 2).length, "the message that spans both lots").toBe(1)
            for (const lot of facts.lots) expect(lot.reserved, "lot counter = its pending holds").toBe(lot.held)
            expect(facts.totals).toMatchObject({ granted: 201, reserved: 200, available: 1, consumed: 0 })
          }),
        60_000
      )
    })

    describe("(b) two processes over 1000 due messages", () => {
      let drop: () => Promise<void> = async () => {}
      let config: Partial<AppConfigShape>
      beforeAll(async () => {
        const scratch = await createScratchDatabase("two_processes")
        drop = scratch.drop
        config = { databaseUrl: Redacted.make(scratch.url), schedulerEnabled: true, simulatorReceiptDelayMs: 500 }
      })
      afterAll(async () => {
        await drop()
      })

      // process A is the suite's app; process B, the same service on the same database, is built for the test
      withApp(Effect.sync(() => ({ config })))((it) => {
        it.effect(
          "both take part; each message is submitted exactly once and ends accepted or delivered",
          () =>
            Effect.gen(function* () {
              const a = yield* App
              const b = Context.get(yield* Layer.build(App.layer({ config })), App)
              const { orgId } = yield* a.newOrg({ credits: dueCount })
              yield* b.call("GET", "/health")
              // admitted as a batch would be, due two seconds from now
              const ids = yield* Effect.gen(function* () {
                const sql = yield* SqlClient.SqlClient
                const store = yield* MessageStore
                const ledger = yield* Ledger
                const at = yield* now
                const sendAt = new Date(at.getTime() + 2_000)
                const ids: Array<string> = Array.from({ length: dueCount }, () => randomUUID())
                yield* Effect.gen(function* () {
                  yield* store.insert(
                    orgId,
                    ids.map((id, i) => ({
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
                    })),
                    at
                  )
                  yield* ledger.reserve(
                    orgId,
                    ids.map((messageId) => ({ messageId, credits: 1 }))
                  )
                }).pipe(sql.withTransaction)
                return ids
              })

              const statuses = () =>
                Effect.gen(function* () {
                  const sql = yield* SqlClient.SqlClient
                  return yield* sql<{ status: string; n: number }>`SELECT status, count(*)::integer AS n FROM messages
                WHERE organisation_id = ${orgId} GROUP BY status ORDER BY status`
                })
              const settled = ["accepted", "delivered"]
              const final = yield* eventuallyEffect(
                statuses(),
                (rows) => rows.every((r) => settled.includes(r.status)),
                {
                  timeoutMs: 60_000,
                  what: "every due message accepted"
                }
              )
              expect(final.reduce((n, r) => n + r.n, 0)).toBe(dueCount)

              const byA = ids.filter((id) => a.calls.submits.has(id))
              const byB = ids.filter((id) => b.calls.submits.has(id))
              expect(byA.length, "process A submitted some").toBeGreaterThan(0)
              expect(byB.length, "process B submitted some").toBeGreaterThan(0)
              expect(
                byA.filter((id) => b.calls.submits.has(id)),
                "submitted by both"
              ).toEqual([])
              expect(byA.length + byB.length, "every message submitted").toBe(dueCount)
              expect(
                ids.filter((id) => (a.calls.submits.get(id) ?? 0) + (b.calls.submits.get(id) ?? 0) !== 1),
                "not submitted exactly once"
              ).toEqual([])

              const facts = yield* Effect.gen(function* () {
                const sql = yield* SqlClient.SqlClient
                const [events] = yield* sql<{ dispatched: number; provider: number }>`SELECT
                count(DISTINCT message_id) FILTER (WHERE from_status = 'scheduled' AND to_status = 'processing')::integer AS dispatched,
                (count(*) FILTER (WHERE source = 'provider'))::integer AS provider
              FROM (${sql.literal(timelineEntriesSql)}) AS e WHERE organisation_id = ${orgId}`
                return { events, totals: yield* (yield* Ledger).totals(orgId) }
              })
              expect(facts.events, "timeline: one dispatch and one provider answer each").toEqual({
                dispatched: dueCount,
                provider: dueCount
              })
              expect({
                consumed: facts.totals.consumed,
                reserved: facts.totals.reserved,
                available: facts.totals.available
              }).toEqual({ consumed: dueCount, reserved: 0, available: 0 })
            }),
          120_000
        )
      })
    })
  }
)
