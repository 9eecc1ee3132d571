/**
 * Tests that need a real PostgreSQL server: the embedded PGlite serves one connection at a
 * time, so nothing there ever runs concurrently. Without DATABASE_URL they are skipped, and the
 * skipped block's name says why.
 *
 * (a) 50 identical POSTs racing on one Idempotency-Key (the slow test number keeps the first
 *     one in flight): one message, one reservation, one provider submission; every other
 *     answer replays the 201 or is 409 idempotency_in_progress.
 * (b) Two dispatchers draining 1000 due messages with WorkQueue.claimDue (FOR UPDATE SKIP
 *     LOCKED): their claims are disjoint and cover every message, each message goes to the
 *     provider exactly once and ends accepted.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { SimulatorLive, testNumbers } from "../../simulator/Simulator.ts"
import { AdminToken } from "../../src/admin/AdminToken.ts"
import { layerConfig } from "../../src/Config.ts"
import { DatabaseLive } from "../../src/db/Database.ts"
import { Provider } from "../../src/dispatch/Provider.ts"
import { WorkQueue } from "../../src/dispatch/WorkQueue.ts"
import { HttpAppLive } from "../../src/http/Server.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { Messages } from "../../src/messages/Messages.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { Organisations } from "../../src/organisations/Organisations.ts"
import { servicesWith } from "../../src/Services.ts"
import { now } from "../../src/Time.ts"
import { scratchDatabaseLayer } from "../support/ScratchDatabase.ts"
import { adminToken, makeCaller, testConfig } from "../support/TestApp.ts"

const databaseUrl = process.env.DATABASE_URL

/** Every submit the provider received, by message id, in this test process. */
const submissions = new Map<string, { readonly organisationId: string; count: number }>()

/** The simulator, counting submissions. */
const countingProvider = (options: { readonly receiptDelayMs: number; readonly slowMs: number }) =>
  Layer.effect(Provider, Effect.gen(function*() {
    const simulator = yield* Provider
    return Provider.of({
      submit: (s) =>
        Effect.sync(() => {
          const seen = submissions.get(s.messageId)
          if (seen === undefined) submissions.set(s.messageId, { organisationId: s.organisationId, count: 1 })
          else seen.count++
        }).pipe(Effect.andThen(simulator.submit(s))),
      status: simulator.status,
      receipts: simulator.receipts
    })
  })).pipe(Layer.provide(SimulatorLive(options)))

const submittedFor = (organisationId: string) => [...submissions.entries()].filter(([, s]) => s.organisationId === organisationId)

// ---------------------------------------------------------------------------------------------
// (a) the HTTP application of test/support/TestApp.ts, with the counting provider
// ---------------------------------------------------------------------------------------------

type Captured = SqlClient.SqlClient | Ledger

const makeCountingApp = (slowMs: number) => {
  const config = testConfig({ simulatorSlowMs: slowMs })
  let captured: Context.Context<Captured> | undefined
  const Capture = Layer.effectDiscard(Effect.gen(function*() {
    captured = yield* Effect.context<Captured>()
  }))
  const app = Layer.mergeAll(HttpAppLive, Capture).pipe(
    Layer.provideMerge(AdminToken.layer),
    Layer.provideMerge(servicesWith(countingProvider({ receiptDelayMs: config.simulatorReceiptDelayMs, slowMs }))),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(layerConfig(config)),
    Layer.provide(HttpServer.layerServices)
  )
  const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true })

  const call = makeCaller(handler)

  /** Runs an effect with the app's own SqlClient and Ledger (after a first request built the app). */
  const query = <A, E>(effect: Effect.Effect<A, E, Captured>): Promise<A> => {
    if (captured === undefined) throw new Error("the application is not built yet")
    return Effect.runPromise(Effect.provide(effect, captured))
  }

  const newOrg = async (credits: number) => {
    const org = await call("POST", "/admin/v1/organizations", { token: adminToken, body: { name: "Concurrency org" } })
    if (org.status !== 201) throw new Error(`cannot create organisation: ${org.status} ${org.text}`)
    const orgId: string = org.body.id
    const grant = await call("POST", `/admin/v1/organizations/${orgId}/credits`, { token: adminToken, body: { amount: credits } })
    if (grant.status !== 201) throw new Error(`cannot grant credits: ${grant.status} ${grant.text}`)
    const key = await call("POST", `/admin/v1/organizations/${orgId}/api-keys`, { token: adminToken, body: { permissions: ["sms.send"] } })
    if (key.status !== 201) throw new Error(`cannot issue key: ${key.status} ${key.text}`)
    return { orgId, apiKey: key.body.api_key as string }
  }

  return { call, query, newOrg, dispose }
}

// ---------------------------------------------------------------------------------------------
// (b) a scratch database of its own: the work queue's claims are global, and another test file
// dispatching on the same server would otherwise take some of these 1000 messages.
// ---------------------------------------------------------------------------------------------

const DispatchLayer = servicesWith(countingProvider({ receiptDelayMs: 2000, slowMs: 0 })).pipe(
  Layer.provideMerge(scratchDatabaseLayer("dispatch", testConfig()))
)

const dueCount = 1000
/** Small claims, so the two dispatchers claim at the same moments many times. */
const claimSize = 20
const start = Date.UTC(2026, 0, 10, 12, 0, 0)

describe.skipIf(!databaseUrl)("needs PostgreSQL (set DATABASE_URL; the embedded PGlite serves one connection at a time)", () => {
  describe("(a) 50 identical concurrent POSTs on the slow number", () => {
    it("create one message, one reservation, one submission; the rest replay the 201 or answer 409 in progress", async () => {
      const app = makeCountingApp(300)
      try {
        const { orgId, apiKey } = await app.newOrg(10)
        const key = `race-${randomUUID()}`
        const body = { to: testNumbers.slow, text: "Fifty doors, one message" }
        const post = () =>
          app.call("POST", "/api/sms/v2/messages/", { token: apiKey, headers: { "idempotency-key": key }, body })

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

        const facts = await app.query(Effect.gen(function*() {
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
        expect(submittedFor(orgId).map(([id, s]) => [id, s.count]), "provider submissions").toEqual([[message.id, 1]])
      } finally {
        await app.dispose()
      }
    }, 60_000)
  })

  layer(DispatchLayer, { excludeTestServices: true })("(b) two dispatchers over 1000 due messages", (it) => {
    it.effect("claim disjoint sets covering every message; each is submitted exactly once and ends accepted", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* MessageStore
        const ledger = yield* Ledger
        const queue = yield* WorkQueue
        const messages = yield* Messages

        yield* TestClock.setTime(start)
        const org = yield* (yield* Organisations).create("Dispatch race org", "RACE")
        yield* ledger.grant(org.id, dueCount, null)
        const sendAt = new Date(start + 60 * 60_000)
        const ids: Array<string> = Array.from({ length: dueCount }, () => randomUUID())
        yield* Effect.gen(function*() {
          yield* store.insert(org.id, ids.map((id, i) => ({
            id,
            batchId: null,
            batchPosition: null,
            toNumber: i % 2 === 0 ? "+261341234567" : testNumbers.acceptedNoReceipt,
            senderName: "RACE",
            text: `Due message ${i}`,
            segments: 1,
            status: "scheduled" as const,
            sendAt
          })), yield* now)
          yield* ledger.reserve(org.id, ids.map((messageId) => ({ messageId, credits: 1 })))
        }).pipe(sql.withTransaction)
        expect((yield* ledger.totals(org.id)).reserved).toBe(dueCount)

        // the clock passes send_at; two dispatcher loops run until nothing is due
        yield* TestClock.setTime(sendAt.getTime() + 1_000)
        const dispatcher = Effect.gen(function*() {
          const claimed: Array<string> = []
          let claims = 0
          while (true) {
            const batch = yield* queue.claimDue(yield* now, claimSize)
            if (batch.length === 0) return { claimed, claims }
            claims++
            claimed.push(...batch.map((m) => m.id))
            yield* Effect.forEach(batch, (m) => messages.submitAndSettle(m), { concurrency: 8, discard: true })
          }
        })
        const [a, b] = yield* Effect.all([dispatcher, dispatcher], { concurrency: "unbounded" })

        const mine = new Set(ids)
        const ownA = a.claimed.filter((id) => mine.has(id))
        const ownB = b.claimed.filter((id) => mine.has(id))
        expect(ownA.length, `dispatcher A claimed (${a.claims} claims)`).toBeGreaterThan(0)
        expect(ownB.length, `dispatcher B claimed (${b.claims} claims)`).toBeGreaterThan(0)
        expect(ownA.filter((id) => ownB.includes(id)), "claimed by both").toEqual([])
        expect(new Set([...ownA, ...ownB]).size, "claimed once each").toBe(ownA.length + ownB.length)
        expect([...ownA, ...ownB].sort(), "every message claimed").toEqual([...ids].sort())

        const counts = submittedFor(org.id)
        expect(counts.length, "messages submitted").toBe(dueCount)
        expect(counts.filter(([, s]) => s.count !== 1), "messages not submitted exactly once").toEqual([])

        const statuses = yield* sql<{ status: string; n: number }>`SELECT status, count(*)::integer AS n FROM messages
          WHERE organisation_id = ${org.id} GROUP BY status ORDER BY status`
        expect(statuses.filter((s) => s.status !== "accepted" && s.status !== "delivered"), "messages not accepted/delivered")
          .toEqual([])
        const events = yield* sql<{ n: number; dispatched: number }>`SELECT count(*)::integer AS n,
            count(DISTINCT message_id) FILTER (WHERE from_status = 'scheduled' AND to_status = 'processing')::integer AS dispatched
          FROM message_events WHERE organisation_id = ${org.id}`
        expect(events[0], "timeline: admission, dispatch, provider for each").toEqual({ n: 3 * dueCount, dispatched: dueCount })
        const totals = yield* ledger.totals(org.id)
        expect({ consumed: totals.consumed, reserved: totals.reserved, available: totals.available })
          .toEqual({ consumed: dueCount, reserved: 0, available: 0 })
      }).pipe(Effect.provide(TestClock.layer())), 120_000)
  })
})
