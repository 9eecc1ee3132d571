/**
 * The outbox (docs/decisions.md#webhooks): every status change that emits an event writes it with the
 * change, whatever moved it (the provider's answer, a receipt, due-time blocking), and
 * `batch.completed` exactly once, when the last member of a batch is final, carrying the batch as
 * GET /message-batches/{id}/ answers it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { batchPath, ordinaryNumbers, postBatch, withOffset } from "../batches/support.ts"
import { App, withApp } from "../support/TestApp.ts"
import { createEndpoint, type Receiver, startReceiver, withWebhooks } from "./support.ts"

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

const hour = 3_600_000

/** The types of the events written for the organisation, sorted. */
const eventTypes = (orgId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ type: string }>`SELECT type FROM webhook_events WHERE organisation_id = ${orgId}`
    return rows.map((r) => r.type).sort()
  })

const bodies = () => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("webhook outbox", { timeout: 120_000 }, () => {
  withApp({ label: "webhook_outbox", config: { clock: "test" } })((it) => {
    it.effect("a batch emits each member's events and batch.completed once, with the batch as GET answers it", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 20, permissions: withWebhooks })
        receiver.received.length = 0
        yield* createEndpoint(apiKey, { url: receiver.url })
        // delivered, undeliverable (receipt), failed (provider), and an ordinary one: delivered
        const recipients = ["+261340000001", "+261340000002", "+261340000003", ...ordinaryNumbers(1, 900)]
        const res = yield* postBatch(apiKey, {
          recipients,
          text: "Salama",
          send_at: withOffset(new Date((yield* app.now) + hour), "+03:00")
        })
        expect(res.status, res.text).toBe(202)
        yield* app.advance(hour + 60_000)
        const batch = (yield* app.call("GET", batchPath(res.body.id), { token: apiKey })).body
        expect(batch.counts).toMatchObject({ delivered: 2, undeliverable: 1, failed: 1 })
        expect(yield* eventTypes(orgId)).toEqual([
          "batch.completed",
          "message.accepted",
          "message.accepted",
          "message.accepted",
          "message.delivered",
          "message.delivered",
          "message.failed",
          "message.undeliverable"
        ])
        const completed = bodies().filter((b) => b.type === "batch.completed")
        expect(completed).toHaveLength(1)
        expect(completed[0]!.data).toEqual(batch)
        // every member's final event carries the message as GET answers it now (final: it no longer changes)
        for (const b of bodies().filter((x) =>
          ["message.delivered", "message.undeliverable", "message.failed"].includes(x.type)
        )) {
          const message = (yield* app.call("GET", `/api/sms/v2/messages/${String(b.data.id)}/`, { token: apiKey })).body
          expect(b.data).toEqual(message)
        }
      })
    )

    it.effect("due-time blocking emits message.blocked", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 20, permissions: withWebhooks })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: true })).status).toBe(200)
        yield* createEndpoint(apiKey, { url: receiver.url, events: ["message.blocked"] })
        const send = yield* app.call("POST", "/api/sms/v2/messages/", {
          token: apiKey,
          headers: { "idempotency-key": `blocked-${orgId}` },
          body: {
            to: "+261340000001",
            text: "Salama",
            sender_name: "PROMO",
            send_at: withOffset(new Date((yield* app.now) + hour), "+03:00")
          }
        })
        expect(send.status, send.text).toBe(202)
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: false })).status).toBe(200)
        yield* app.advance(hour + 1000)
        expect(yield* eventTypes(orgId)).toEqual(["message.blocked"])
        const blocked = bodies().filter((b) => b.type === "message.blocked" && b.data.id === send.body.id)
        expect(blocked).toHaveLength(1)
        expect(blocked[0]!.data.status).toBe("blocked")
      })
    )

    it.effect("erasure of a message blanks the recipient and sender of its events, as GET then shows them", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5, permissions: withWebhooks })
        yield* createEndpoint(apiKey, { url: receiver.url })
        const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
          token: apiKey,
          headers: { "idempotency-key": `erase-${orgId}` },
          body: { to: "+261340000001", text: "Salama" }
        })
        expect(sent.status, sent.text).toBe(201)
        yield* app.advance(app.config.simulatorReceiptDelayMs + 1000)
        const snapshots = () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql<{
              to: string
              sender: string
            }>`SELECT message->>'toNumber' AS to, message->>'senderName' AS sender
              FROM webhook_events WHERE organisation_id = ${orgId} ORDER BY type`
          })
        expect(yield* snapshots()).toEqual([
          { to: "+261340000001", sender: expect.any(String) },
          { to: "+261340000001", sender: expect.any(String) }
        ])
        expect((yield* app.admin("POST", `/organizations/${orgId}/messages/${sent.body.id}/erasure`)).status).toBe(200)
        expect(yield* snapshots()).toEqual([
          { to: "", sender: "" },
          { to: "", sender: "" }
        ])
      })
    )
  })
})
