/**
 * The whole service with a routing file naming a OneAPI entry that points at the fake
 * (docs/operators.md#oneapi-routes): a message sent there ends `delivered` once the provider
 * POSTs its DeliveredToTerminal; a repeat is stored once; a status that is not final stores
 * nothing; a receipt for a message whose acceptance is not recorded is 503 (told again later); a
 * wrong secret or an unknown entry is 404 and counted on /metrics; a bad body 400 (counted); an
 * inbound notification becomes an inbound message.
 */
import { afterAll, afterEach, expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { defaultTiming } from "../../../src/config/SmppSettings.ts"
import { inboundFrom, newSender } from "../../inbound/support.ts"
import { parseSamples, sampleValue } from "../../observability/prometheus.ts"
import { eventuallyEffect } from "../../support/Eventually.ts"
import { create, statusOf } from "../../support/Messages.ts"
import { adminToken, App, backend, withApp } from "../../support/TestApp.ts"
import { FakeOneApi } from "./FakeOneApi.ts"

let fake: FakeOneApi | undefined

afterEach(() => fake?.reset())
afterAll(async () => {
  await fake?.close()
})

const appOptions = Effect.promise(async () => {
  fake = await FakeOneApi.start()
  return {
    label: "oneapi_notify",
    config: {
      provider: "smpp" as const,
      smpp: {
        routes: [],
        oneapi: [fake.settings({ prefixes: ["*"] })],
        responseTimeoutMs: 2000,
        timing: { ...defaultTiming, throttleInitialMs: 20, throttleMaxMs: 80 }
      },
      publicUrl: "http://sms.test",
      schedulerEnabled: true,
      verifyIntervalMs: 200
    }
  }
})

/** The path of the notify URL the provider was given with the last send. */
const notifyPath = () => {
  const url: string = fake!.sends.at(-1)?.json.outboundSMSMessageRequest.receiptRequest.notifyURL
  expect(url).toMatch(/^http:\/\/sms\.test\/providers\/orange\/receipts\//)
  return url.replace("http://sms.test", "")
}

const receiptBody = (messageId: string, deliveryStatus: string, to = "+261320000001") => ({
  deliveryInfoNotification: { deliveryInfo: { address: `tel:${to}`, deliveryStatus }, callbackData: messageId }
})

const post = (path: string, body: unknown) => Effect.flatMap(App, (app) => app.call("POST", path, { body }))

/** A message sent to the fake: its id and the notify path it was given. */
const sent = (apiKey: string, to = "+261320000001") =>
  Effect.gen(function* () {
    const { id, reply } = yield* create(apiKey, { to, text: "Salama" })
    expect(reply.status, reply.text).toBe(201)
    return { id, path: notifyPath() }
  })

/** The provider ref the message was accepted under (read before a receipt makes it final: a final message forgets it). */
const refOf = (messageId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ ref: string | null }>`SELECT provider_message_id AS ref FROM messages WHERE id = ${messageId}::uuid`,
      (rows) => rows[0]?.ref ?? null
    )
  )

/** The receipts stored under a provider ref. */
const receiptsOf = (ref: string | null) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ outcome: string }>`SELECT outcome FROM provider_receipts WHERE provider_ref = ${ref}`
  )

const refusedCount = (route: string, reason: string) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).call("GET", "/metrics", { token: adminToken, headers: { accept: "text/plain" } })
    expect(res.status, res.text).toBe(200)
    return sampleValue(parseSamples(res.text), "sms_provider_notifications_refused_total", { route, reason })
  })

withApp(appOptions)(`OneAPI notifications through the service (${backend})`, (it) => {
  it.effect(
    "a message sent to the provider ends delivered after a POSTed DeliveredToTerminal; a repeat is stored once",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey, orgId } = yield* app.newOrg({ credits: 10 })
        const { id, path } = yield* sent(apiKey)
        expect(yield* statusOf(apiKey, id)).toBe("accepted")
        const ref = yield* refOf(id)
        expect(ref).toMatch(/^orange:req-\d+$/)
        const first = yield* post(path, receiptBody(id, "DeliveredToTerminal"))
        expect(first.status, first.text).toBe(204)
        const again = yield* post(path, receiptBody(id, "DeliveredToTerminal"))
        expect(again.status, again.text).toBe(204)
        yield* eventuallyEffect(statusOf(apiKey, id), (s) => s === "delivered", { what: "delivered" })
        // applied once (its timeline moved once), the repeat ignored: nothing left pending
        const toDelivered = (yield* app.timeline(orgId, id)).filter((e) => e.toStatus === "delivered")
        expect(toDelivered).toHaveLength(1)
        expect(yield* receiptsOf(ref)).toEqual([])
        const late = yield* post(path, receiptBody(id, "DeliveryImpossible"))
        expect(late.status, late.text).toBe(204)
        expect(yield* statusOf(apiKey, id)).toBe("delivered")
      })
  )

  it.effect("DeliveryImpossible makes it undeliverable; a status that is not final stores nothing", () =>
    Effect.gen(function* () {
      const { apiKey } = yield* (yield* App).newOrg({ credits: 10 })
      const { id, path } = yield* sent(apiKey)
      const ref = yield* refOf(id)
      const waiting = yield* post(path, receiptBody(id, "DeliveredToNetwork"))
      expect(waiting.status, waiting.text).toBe(204)
      expect(yield* receiptsOf(ref)).toEqual([])
      expect(yield* statusOf(apiKey, id)).toBe("accepted")
      const impossible = yield* post(path, receiptBody(id, "DeliveryImpossible"))
      expect(impossible.status, impossible.text).toBe(204)
      yield* eventuallyEffect(statusOf(apiKey, id), (s) => s === "undeliverable", { what: "undeliverable" })
    })
  )

  it.effect(
    "a receipt for an unknown send is 503 with Retry-After, kept as evidence: the message becomes accepted, and the receipt told again makes it delivered",
    () =>
      Effect.gen(function* () {
        const { apiKey } = yield* (yield* App).newOrg({ credits: 10 })
        // a 500: its result is unknown, no provider ref
        fake!.onSend = () => ({ status: 500 })
        const { id, reply } = yield* create(apiKey, { to: "+261320000002", text: "Salama" })
        expect(reply.body.error.code, reply.text).toBe("provider_result_unknown")
        expect(yield* refOf(id)).toBeNull()
        const path = notifyPath()
        const res = yield* post(path, receiptBody(id, "DeliveredToTerminal", "+261320000002"))
        expect(res.status, res.text).toBe(503)
        expect(res.headers.get("retry-after")).toBe("2")
        expect(res.body.error.code).toBe("service_unavailable")
        // the verifier takes the receipt's evidence: taken, under the correlator's ref; never sent again
        yield* eventuallyEffect(statusOf(apiKey, id), (s) => s === "accepted", { what: "accepted by evidence" })
        expect(yield* refOf(id)).toBe(`orange:c:${id}`)
        expect(fake!.sends).toHaveLength(1)
        const again = yield* post(path, receiptBody(id, "DeliveredToTerminal", "+261320000002"))
        expect(again.status, again.text).toBe(204)
        yield* eventuallyEffect(statusOf(apiKey, id), (s) => s === "delivered", { what: "delivered" })
      })
  )

  it.effect("a wrong secret or an unknown entry is 404 in the error body, counted on /metrics", () =>
    Effect.gen(function* () {
      const { apiKey } = yield* (yield* App).newOrg({ credits: 10 })
      const { id, path } = yield* sent(apiKey)
      const ref = yield* refOf(id)
      const wrongBefore = yield* refusedCount("orange", "wrong_secret")
      const unknownBefore = yield* refusedCount("unknown", "unknown_route")
      const secret = path.split("/").pop()!
      const wrong = `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`
      const res = yield* post(path.replace(secret, wrong), receiptBody(id, "DeliveredToTerminal"))
      expect(res.status, res.text).toBe(404)
      expect(res.body.error.code).toBe("not_found")
      const short = yield* post(path.replace(secret, "x"), receiptBody(id, "DeliveredToTerminal"))
      expect(short.status).toBe(404)
      const other = yield* post(path.replace("/orange/", "/telma/"), receiptBody(id, "DeliveredToTerminal"))
      expect(other.status).toBe(404)
      expect(yield* refusedCount("orange", "wrong_secret")).toBe(wrongBefore + 2)
      expect(yield* refusedCount("unknown", "unknown_route")).toBe(unknownBefore + 1)
      expect(yield* receiptsOf(ref)).toEqual([])
      expect(yield* statusOf(apiKey, id)).toBe("accepted")
    })
  )

  it.effect("a receipt naming no message is 204, nothing stored, counted as unknown_message", () =>
    Effect.gen(function* () {
      const { apiKey } = yield* (yield* App).newOrg({ credits: 10 })
      const { path } = yield* sent(apiKey)
      const before = yield* refusedCount("orange", "unknown_message")
      for (const callbackData of ["01a24ca5-e8c9-75df-a60e-000000000000", "not-a-message-id"]) {
        const res = yield* post(path, receiptBody(callbackData, "DeliveredToTerminal"))
        expect(res.status, res.text).toBe(204)
      }
      expect(yield* refusedCount("orange", "unknown_message")).toBe(before + 2)
    })
  )

  it.effect("a body that is no notification is 400 validation_error, counted, never a 500", () =>
    Effect.gen(function* () {
      const { apiKey } = yield* (yield* App).newOrg({ credits: 10 })
      const { id, path } = yield* sent(apiKey)
      const before = yield* refusedCount("orange", "bad_body")
      const bodies: ReadonlyArray<unknown> = [
        {},
        receiptBody(id, "Delivered"),
        { deliveryInfoNotification: { deliveryInfo: { address: "tel:+261320000001" } } }
      ]
      for (const body of bodies) {
        const res = yield* post(path, body)
        expect(res.status, res.text).toBe(400)
        expect(res.body.error.code).toBe("validation_error")
      }
      const app = yield* App
      const raw = yield* app.call("POST", path, { raw: "{not json" })
      expect(raw.status, raw.text).toBe(400)
      const inbound = yield* post(path.replace("/receipts/", "/inbound/"), { inboundSMSMessageNotification: {} })
      expect(inbound.status, inbound.text).toBe(400)
      expect(yield* refusedCount("orange", "bad_body")).toBe(before + 5)
    })
  )

  it.effect("an inbound notification becomes an inbound message, told twice stored once", () =>
    Effect.gen(function* () {
      const { apiKey } = yield* (yield* App).newOrg({ credits: 10 })
      const { path } = yield* sent(apiKey)
      const from = newSender()
      const body = {
        inboundSMSMessageNotification: {
          inboundSMSMessage: {
            dateTime: "2026-12-06T10:00:00Z",
            destinationAddress: "tel:+2610000",
            messageId: "mo-1",
            message: "Misaotra ô 😀",
            senderAddress: `tel:${from}`
          }
        }
      }
      const inboundPath = path.replace("/receipts/", "/inbound/")
      const first = yield* post(inboundPath, body)
      expect(first.status, first.text).toBe(204)
      const again = yield* post(inboundPath, body)
      expect(again.status, again.text).toBe(204)
      const rows = yield* eventuallyEffect(inboundFrom(from), (r) => r.length > 0, { what: "the inbound message" })
      expect(rows.map((r) => [r.fromNumber, r.toNumber, r.text])).toEqual([[from, "+2610000", "Misaotra ô 😀"]])
    })
  )
})
