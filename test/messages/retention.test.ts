/**
 * Retention (docs/decisions.md#retention) and compaction under the service's test clock: a message final for longer than its
 * organisation's retention (its own, else SMS_RETENTION_DAYS) is erased as the operator's erasure
 * does, at once on the advance that passes the limit, and not before; its key replays 410 and no
 * credit moves. Each test advances the shared clock: it only judges its own organisations.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect } from "@effect/vitest"
import { simulatorMemoryMs } from "../../src/messages/Compaction.ts"
import { expectError } from "../http/helpers.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const defaultDays = 2

const dayMs = 86_400_000
const messagesPath = "/api/sms/v2/messages/"

/** An organisation with `retentionDays` of its own (undefined: the default), and a delivered message of it. */
const deliveredMessage = (retentionDays?: number) =>
  Effect.gen(function* () {
    const app = yield* App
    const { orgId, apiKey } = yield* app.newOrg({ credits: 10, sender: "KEEP" })
    if (retentionDays !== undefined) {
      const set = yield* app.admin("PATCH", `/organizations/${orgId}`, { retention_days: retentionDays })
      expect(set.status, set.text).toBe(200)
    }
    const body = { to: "+261340000001", text: `kept a while ${randomUUID()}` }
    const key = `retention-${randomUUID()}`
    const post = () => app.call("POST", messagesPath, { token: apiKey, body, headers: { "idempotency-key": key } })
    const created = yield* post()
    expect(created.status, created.text).toBe(201)
    yield* app.advance(app.config.simulatorReceiptDelayMs + 1_000)
    const id: string = created.body.id
    const read = () =>
      app.call("GET", `${messagesPath}${id}/`, { token: apiKey }).pipe(Effect.map((reply) => reply.body))
    const balance = () =>
      app.call("GET", "/api/sms/v2/balance/", { token: apiKey }).pipe(Effect.map((reply) => reply.body))
    expect((yield* read()).status).toBe("delivered")
    return { orgId, apiKey, id, body, post, read, balance }
  })

withApp({ label: "retention", config: { clock: "test", retentionDays: defaultDays } })((it) => {
  describe(`retention (${backend})`, () => {
    it.effect(
      "erases a message once final for longer than the default, not before: blank, 410 on replay, the balance unchanged",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const m = yield* deliveredMessage()
          const before = yield* m.read()
          const balance = yield* m.balance()

          yield* app.advance(defaultDays * dayMs - 60_000)
          expect(yield* m.read()).toEqual(before)
          expect((yield* m.post()).status).toBe(201)

          yield* app.advance(120_000)
          const after = yield* m.read()
          expect(after).toEqual({ ...before, to: "", sender_name: "" })
          expectError(yield* m.post(), 410, "personal_data_erased")
          expect(yield* m.balance()).toEqual(balance)
          // the operator sees it erased too, with its timeline as it was
          const seen = yield* app.admin("GET", `/organizations/${m.orgId}/messages/${m.id}`)
          expect(seen.body).toMatchObject({ to: "", sender_name: "", status: "delivered" })
        })
    )

    it.effect("an organisation's own retention overrides the default", () =>
      Effect.gen(function* () {
        const app = yield* App
        const longer = yield* deliveredMessage(5)
        const shorter = yield* deliveredMessage(1)
        yield* app.advance(1 * dayMs + 60_000)
        expect((yield* shorter.read()).to).toBe("")
        expect((yield* longer.read()).to).toBe(longer.body.to)
        yield* app.advance(3 * dayMs)
        expect((yield* longer.read()).to).toBe(longer.body.to)
        yield* app.advance(1 * dayMs)
        expect((yield* longer.read()).to).toBe("")
        expectError(yield* longer.post(), 410, "personal_data_erased")
      })
    )

    it.effect("retention_days null goes back to the default", () =>
      Effect.gen(function* () {
        const app = yield* App
        const m = yield* deliveredMessage(30)
        const reset = yield* app.admin("PATCH", `/organizations/${m.orgId}`, { retention_days: null })
        expect(reset.body.retention_days).toBeNull()
        yield* app.advance(defaultDays * dayMs + 60_000)
        expect((yield* m.read()).to).toBe("")
      })
    )

    it.effect("a message not final is never erased, however old", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const sendAt = new Date((yield* app.now) + 10 * dayMs).toISOString()
        const created = yield* app.call("POST", messagesPath, {
          token: apiKey,
          body: { to: "+261340000002", text: "later", send_at: sendAt },
          headers: { "idempotency-key": randomUUID() }
        })
        expect(created.status, created.text).toBe(202)
        yield* app.moveClock(5 * dayMs)
        yield* app.advance(1_000)
        const read = yield* app.call("GET", `${messagesPath}${created.body.id}/`, { token: apiKey })
        expect(read.body).toMatchObject({ status: "scheduled", to: "+261340000002" })
      })
    )
  })

  /** Rows kept for the message outside its own row and timeline: its receipts, the simulator's memory of it. */
  const sideRows = (orgId: string, id: string) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ receipts: number; simulator: number }>`SELECT
          (SELECT count(*) FROM provider_receipts r JOIN messages m ON r.provider_ref = m.provider_message_id
            WHERE m.organisation_id = ${orgId} AND m.id = ${id})::integer AS receipts,
          (SELECT count(*) FROM simulator_messages WHERE organisation_id = ${orgId} AND message_id = ${id})::integer AS simulator`
      return row!
    })

  describe(`compaction of finished messages (${backend})`, () => {
    it.effect(
      "a finished message keeps no receipt; the simulator's row goes once no verification can ask; its answer and timeline are the same",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const m = yield* deliveredMessage(60)
          const timeline = () =>
            app.admin("GET", `/organizations/${m.orgId}/messages/${m.id}`).pipe(Effect.map((reply) => reply.body))
          const [message, seen] = [yield* m.read(), yield* timeline()]
          expect(seen.timeline.length).toBeGreaterThanOrEqual(3)
          // its receipt was applied as it came: the message keeps the outcome, nothing else is stored
          expect(yield* sideRows(m.orgId, m.id)).toEqual({ receipts: 0, simulator: 1 })
          // a message left unknown is asked about for 30 days: the simulator still remembers it took it
          yield* app.advance(simulatorMemoryMs - 60_000)
          expect(yield* sideRows(m.orgId, m.id)).toEqual({ receipts: 0, simulator: 1 })
          yield* app.advance(120_000)
          expect(yield* sideRows(m.orgId, m.id)).toEqual({ receipts: 0, simulator: 0 })
          expect(yield* m.read()).toEqual(message)
          expect(yield* timeline()).toEqual(seen)
        })
    )
  })
})
