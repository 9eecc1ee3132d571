/**
 * Webhook deliveries under the service's test clock (docs/decisions.md#the-test-clock and docs/decisions.md#webhooks): events written
 * with the status changes, signed as Standard Webhooks (verified with npm `standardwebhooks`, an
 * independent implementation), retried on the schedule, 410 disabling the endpoint, the rotation
 * overlap. Every advance of the clock runs the attempts due by then before it returns.
 */
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { webhookRetryDelaysMs } from "../../src/domain/Webhooks.ts"
import { App, withApp } from "../support/TestApp.ts"
import { createEndpoint, type Receiver, startReceiver, webhookPath, withWebhooks } from "./support.ts"

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

const messagesPath = "/api/sms/v2/messages/"
/** Endpoints a test deletes whatever comes of it. */
const endpoints: Array<{ readonly id: string; readonly apiKey: string }> = []
let sends = 0
const send = (apiKey: string, to: string) =>
  Effect.flatMap(App, (app) =>
    app.call("POST", messagesPath, {
      token: apiKey,
      headers: { "idempotency-key": `wh-send-${++sends}` },
      body: { to, text: "Salama" }
    })
  )

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("webhook deliveries", { timeout: 120_000 }, () => {
  withApp({ label: "webhooks", config: { clock: "test" } })((it) => {
    it.effect(
      "message events carry the message as GET answers it at the transition, signed, with a stable evt_ id",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: 10, permissions: withWebhooks })
          receiver.status = 204
          receiver.received.length = 0
          const e = yield* createEndpoint(apiKey, { url: receiver.url })
          const sent = yield* send(apiKey, "+261340000001")
          expect(sent.status, sent.text).toBe(201)
          const accepted = (yield* app.call("GET", `${messagesPath}${sent.body.id}/`, { token: apiKey })).body
          yield* app.advance(1)
          expect(receiver.received).toHaveLength(1)
          const first = receiver.received[0]!
          const payload = new Webhook(e.secret).verify(first.body, first.headers as Record<string, string>) as Record<
            string,
            unknown
          >
          expect(payload).toEqual({ type: "message.accepted", timestamp: expect.any(String), data: accepted })
          expect(first.headers["webhook-id"]).toMatch(/^evt_[0-9a-f-]{36}$/)
          expect(first.headers["content-type"]).toBe("application/json")

          // the simulator's receipt: delivered
          yield* app.advance(app.config.simulatorReceiptDelayMs + 1000)
          expect(receiver.received).toHaveLength(2)
          const second = receiver.received[1]!
          const delivered = (yield* app.call("GET", `${messagesPath}${sent.body.id}/`, { token: apiKey })).body
          expect(delivered.status).toBe("delivered")
          expect(new Webhook(e.secret).verify(second.body, second.headers as Record<string, string>)).toEqual({
            type: "message.delivered",
            timestamp: expect.any(String),
            data: delivered
          })
          const log = yield* app.call("GET", `${webhookPath(e.id)}deliveries/`, { token: apiKey })
          expect(
            log.body.results.map((d: { type: string; state: string; attempts: number; last_status_code: number }) => [
              d.type,
              d.state,
              d.attempts,
              d.last_status_code
            ])
          ).toEqual([
            ["message.delivered", "succeeded", 1, 204],
            ["message.accepted", "succeeded", 1, 204]
          ])
          yield* app.call("DELETE", webhookPath(e.id), { token: apiKey })
        })
    )

    it.effect("writes events only for the types an enabled endpoint subscribes to, and none without an endpoint", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey, orgId } = yield* app.newOrg({ credits: 10, permissions: withWebhooks })
        const countEvents = () =>
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const rows = yield* sql<{
              type: string
            }>`SELECT type FROM webhook_events WHERE organisation_id = ${orgId} ORDER BY occurred_at, type`
            return rows.map((r) => r.type)
          })
        expect((yield* send(apiKey, "+261340000001")).status).toBe(201)
        yield* app.advance(app.config.simulatorReceiptDelayMs + 1000)
        expect(yield* countEvents()).toEqual([])

        receiver.received.length = 0
        const e = yield* createEndpoint(apiKey, { url: receiver.url, events: ["message.delivered"] })
        expect((yield* send(apiKey, "+261340000001")).status).toBe(201)
        yield* app.advance(app.config.simulatorReceiptDelayMs + 1000)
        expect(yield* countEvents()).toEqual(["message.delivered"])
        expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(["message.delivered"])

        yield* app.call("PATCH", webhookPath(e.id), { token: apiKey, body: { enabled: false } })
        expect((yield* send(apiKey, "+261340000001")).status).toBe(201)
        yield* app.advance(app.config.simulatorReceiptDelayMs + 1000)
        expect(yield* countEvents()).toEqual(["message.delivered"])
        yield* app.call("DELETE", webhookPath(e.id), { token: apiKey })
      })
    )

    it.effect(
      "a failing receiver sees attempts at +5 s, +5 min, +30 min, 2 h, 5 h, 10 h, 10 h (jitter <= 10 %), then the delivery is failed",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
          receiver.status = 500
          receiver.received.length = 0
          const e = yield* createEndpoint(apiKey, { url: receiver.url })
          receiver.clock = () => Effect.runSync(app.now)
          expect((yield* app.call("POST", `${webhookPath(e.id)}test/`, { token: apiKey })).status).toBe(202)
          yield* app.advance(1)
          expect(receiver.received).toHaveLength(1)
          // not before its time
          yield* app.advance(4_000)
          expect(receiver.received).toHaveLength(1)
          yield* app.advance(50 * 3_600_000)
          expect(receiver.received).toHaveLength(1 + webhookRetryDelaysMs.length)
          const ids = new Set(receiver.received.map((r) => r.headers["webhook-id"]))
          expect(ids.size).toBe(1)
          // retries follow the service's clock (the header carries the real time of each attempt)
          const times = receiver.received.map((r) => Math.floor(r.at / 1000))
          webhookRetryDelaysMs.forEach((delay, i) => {
            const gap = times[i + 1]! - times[i]!
            expect(gap, `retry ${i + 1}`).toBeGreaterThanOrEqual(Math.floor(delay / 1000) - 1)
            expect(gap, `retry ${i + 1}`).toBeLessThanOrEqual(Math.ceil((delay * 1.1) / 1000) + 1)
          })
          const log = yield* app.call("GET", `${webhookPath(e.id)}deliveries/`, { token: apiKey })
          expect(log.body.results[0]).toMatchObject({
            type: "webhook.test",
            state: "failed",
            attempts: 8,
            last_status_code: 500,
            next_attempt_at: null
          })
          expect(log.body.results[0].last_error).toContain("refused with 500")

          // retry now: a failed delivery is attempted again
          receiver.status = 200
          const retry = yield* app.call(
            "POST",
            `${webhookPath(e.id)}deliveries/${log.body.results[0].event_id}/retry/`,
            {
              token: apiKey
            }
          )
          expect(retry.status).toBe(202)
          yield* app.advance(1)
          expect(receiver.received).toHaveLength(2 + webhookRetryDelaysMs.length)
          const after = yield* app.call("GET", `${webhookPath(e.id)}deliveries/`, { token: apiKey })
          expect(after.body.results[0]).toMatchObject({ state: "succeeded", attempts: 9, last_status_code: 200 })
          receiver.clock = () => Date.now()
          yield* app.call("DELETE", webhookPath(e.id), { token: apiKey })
        })
    )

    it.effect(
      "an hour after the test clock left the real time, events still verify with standardwebhooks: webhook-timestamp is the attempt's real time, the body's timestamp the transition's on the service clock",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: 10, permissions: withWebhooks })
          receiver.status = 204
          receiver.received.length = 0
          const e = yield* createEndpoint(apiKey, { url: receiver.url })
          endpoints.push({ id: e.id, apiKey })
          // past standardwebhooks' tolerance (5 minutes), whatever the earlier tests did
          yield* app.advance(3_600_000)
          expect((yield* app.now) - Date.now()).toBeGreaterThan(3_000_000)
          const sent = yield* send(apiKey, "+261340000001")
          expect(sent.status, sent.text).toBe(201)
          const accepted = (yield* app.call("GET", `${messagesPath}${sent.body.id}/`, { token: apiKey })).body
          const before = Date.now()
          yield* app.advance(1)
          const after = Date.now()
          expect(receiver.received).toHaveLength(1)
          const first = receiver.received[0]!
          const payload = new Webhook(e.secret).verify(first.body, first.headers as Record<string, string>) as Record<
            string,
            unknown
          >
          expect(payload).toMatchObject({ type: "message.accepted", data: accepted })
          const headerSeconds = Number(first.headers["webhook-timestamp"])
          expect(headerSeconds).toBeGreaterThanOrEqual(Math.floor(before / 1000))
          expect(headerSeconds).toBeLessThanOrEqual(Math.ceil(after / 1000))
          // the body's timestamp is the transition's, on the service clock: an hour ahead of the real time
          const transitionAt = Date.parse(String(payload.timestamp))
          expect(transitionAt - after).toBeGreaterThan(3_000_000)
          expect(transitionAt).toBeLessThanOrEqual(yield* app.now)
        }).pipe(
          // whatever came of it, the endpoint goes: its later events would reach the next tests' receiver
          Effect.ensuring(
            Effect.gen(function* () {
              const app = yield* App
              for (const e of endpoints.splice(0)) yield* app.call("DELETE", webhookPath(e.id), { token: e.apiKey })
            })
          )
        )
    )

    it.effect("a 410 disables the endpoint and fails the delivery", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        receiver.status = 410
        receiver.received.length = 0
        const e = yield* createEndpoint(apiKey, { url: receiver.url })
        yield* app.call("POST", `${webhookPath(e.id)}test/`, { token: apiKey })
        yield* app.advance(1)
        expect(receiver.received).toHaveLength(1)
        expect((yield* app.call("GET", webhookPath(e.id), { token: apiKey })).body.enabled).toBe(false)
        const log = yield* app.call("GET", `${webhookPath(e.id)}deliveries/`, { token: apiKey })
        expect(log.body.results[0]).toMatchObject({ state: "failed", attempts: 1, last_status_code: 410 })
        yield* app.call("POST", `${webhookPath(e.id)}test/`, { token: apiKey })
        yield* app.advance(10 * 60_000)
        expect(receiver.received).toHaveLength(1)
        yield* app.call("DELETE", webhookPath(e.id), { token: apiKey })
      })
    )

    it.effect("after a rotation both secrets sign for 24 h, then only the new one", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        receiver.status = 204
        receiver.received.length = 0
        const e = yield* createEndpoint(apiKey, { url: receiver.url })
        const rotated = (yield* app.call("POST", `${webhookPath(e.id)}secret/`, { token: apiKey })).body
          .secret as string
        yield* app.call("POST", `${webhookPath(e.id)}test/`, { token: apiKey })
        yield* app.advance(1)
        const during = receiver.received[0]!
        // each signature of the header is compared with the library's own, made at the attempt's time
        // (verify would accept the header as soon as one of them matched)
        const signed = (secret: string, r: typeof during) =>
          new Webhook(secret).sign(
            String(r.headers["webhook-id"]),
            new Date(Number(r.headers["webhook-timestamp"]) * 1000),
            r.body
          )
        expect(String(during.headers["webhook-signature"]).split(" ")).toEqual([
          signed(rotated, during),
          signed(e.secret, during)
        ])

        yield* app.advance(24 * 3_600_000 + 1000)
        yield* app.call("POST", `${webhookPath(e.id)}test/`, { token: apiKey })
        yield* app.advance(1)
        const later = receiver.received[1]!
        expect(String(later.headers["webhook-signature"]).split(" ")).toEqual([signed(rotated, later)])
        expect(signed(e.secret, later)).not.toBe(signed(rotated, later))
        yield* app.call("DELETE", webhookPath(e.id), { token: apiKey })
      })
    )
  })
})
