// An integrator's test suite against the service on its test clock (SMS_CLOCK=test): all nine
// simulator numbers, a scheduled batch and a credit expiry, through the typed client, with no
// sleep and no polling: the clock is advanced, and an advance answers once the work due is done.
// Run: SMS_URL=http://127.0.0.1:8080 SMS_ADMIN_TOKEN=... node --test integrator-suite.test.ts
import assert from "node:assert/strict"
import { randomUUID } from "node:crypto"
import { before, describe, it } from "node:test"
import { Effect } from "effect"
import { FetchHttpClient, type HttpClient } from "effect/http"
import { createBatch, makeSmsClient, sendMessage, type SmsClient } from "sms-service-client"

const baseUrl = process.env.SMS_URL ?? "http://127.0.0.1:8080"
const adminToken = process.env.SMS_ADMIN_TOKEN ?? ""
const run = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.provide(FetchHttpClient.layer)))

/** The operator API: organisations, keys, credits and the test clock; `T` is the answer's shape. */
const admin = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
  const res = await fetch(`${baseUrl}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const json: unknown = await res.json()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json as T
}
const clockNow = async () => (await admin<{ now: string }>("GET", "/clock")).now
const advance = (body: { seconds: number } | { to: string }) => admin("POST", "/clock/advance", body)

/** A new organisation with `credits` (valid through `validUntil` when given) and a client holding its key. */
const organisation = async (credits: number, validUntil?: string) => {
  const org = await admin<{ id: string }>("POST", "/organizations", {
    name: `Integrator suite ${randomUUID().slice(0, 8)}`
  })
  await admin("POST", `/organizations/${org.id}/credits`, {
    amount: credits,
    ...(validUntil === undefined ? {} : { valid_until: validUntil })
  })
  const key = await admin<{ api_key: string }>("POST", `/organizations/${org.id}/api-keys`, {
    permissions: ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"]
  })
  return { id: org.id, client: await run(makeSmsClient({ baseUrl, apiKey: key.api_key })) }
}

/** An immediate send: the HTTP status and the message id, or the error code and the message id. */
const send = (client: SmsClient, to: string) =>
  sendMessage(client, `suite-${randomUUID()}`, { to, text: "Salama!" }).pipe(
    Effect.map((sent) => ({ answer: String(sent.status), id: sent.body.id })),
    Effect.catchTags({
      ProviderRejected: (e) => Effect.succeed({ answer: e.error.code, id: e.message_id }),
      ProviderResultUnknown: (e) => Effect.succeed({ answer: e.error.code, id: e.message_id }),
      DispatchUnavailable: (e) => Effect.succeed({ answer: e.error.code, id: e.message_id })
    })
  )

// number: what the immediate send answers, and the message's final status
const outcomes = {
  "+261340000001": ["201", "delivered"],
  "+261340000002": ["201", "undeliverable"],
  "+261340000003": ["provider_rejected", "failed"],
  "+261340000004": ["provider_result_unknown", "delivered"],
  "+261340000005": ["dispatch_unavailable", "failed"],
  "+261340000006": ["201", "accepted"],
  "+261340000007": ["201", "delivered"],
  "+261340000008": ["provider_result_unknown", "failed"],
  "+261340000009": ["provider_result_unknown", "unknown"]
} as const

describe("the simulator's nine numbers", () => {
  let org: Awaited<ReturnType<typeof organisation>>
  let sent: Array<{ readonly to: string; readonly answer: string; readonly id: string | undefined }>

  before(async () => {
    org = await organisation(100)
    // all at once: the slow number takes SMS_SIMULATOR_SLOW_MS of real time to answer
    sent = await Promise.all(Object.keys(outcomes).map((to) => run(send(org.client, to)).then((r) => ({ to, ...r }))))
  })

  it("answers each immediate send as the number says, with the message's id", () => {
    for (const { to, answer, id } of sent) {
      assert.equal(answer, outcomes[to as keyof typeof outcomes][0], to)
      assert.ok(id, `${to} has a message id`)
    }
  })

  it("brings each message to its final status once the clock moves on (receipts, verifications)", async () => {
    await advance({ seconds: 60 })
    for (const { to, id } of sent) {
      const message = await run(org.client.messages.get({ params: { message_id: id! } }))
      assert.equal(message.status, outcomes[to as keyof typeof outcomes][1], to)
    }
    // consumed: the five accepted; released: the three failed; reserved: the one still unknown
    assert.deepEqual(await run(org.client.balance.get()), { total: 95, reserved: 1, available: 94, valid_until: null })
  })
})

describe("a scheduled batch", () => {
  it("sends every recipient at send_at and counts their outcomes", async () => {
    const { client } = await organisation(10)
    const sendAt = new Date(Date.parse(await clockNow()) + 3_600_000).toISOString()
    const recipients = ["+261340000001", "+261340000002", "+261340000003"]
    const batch = await run(
      createBatch(client, `batch-${randomUUID()}`, { recipients, text: "Promo", send_at: sendAt })
    )
    assert.equal(batch.status, 202)
    assert.equal(batch.body.counts.scheduled, 3)
    assert.deepEqual(await run(client.balance.get()), { total: 10, reserved: 3, available: 7, valid_until: null })

    await advance({ to: sendAt })
    await advance({ seconds: 60 })
    const after = await run(client["message-batches"].get({ params: { batch_id: batch.body.id } }))
    assert.deepEqual(
      { delivered: after.counts.delivered, undeliverable: after.counts.undeliverable, failed: after.counts.failed },
      { delivered: 1, undeliverable: 1, failed: 1 }
    )
    const page = await run(client["message-batches"].messages({ params: { batch_id: batch.body.id }, query: {} }))
    assert.deepEqual(page.results.map((m) => m.to).sort(), recipients)
  })
})

describe("credits that expire", () => {
  it("fund sends through their valid_until day (UTC), and none after it", async () => {
    const today = (await clockNow()).slice(0, 10)
    const { client } = await organisation(5, today)
    assert.deepEqual(await run(client.balance.get()), { total: 5, reserved: 0, available: 5, valid_until: today })

    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString()
    await advance({ to: tomorrow })
    assert.deepEqual(await run(client.balance.get()), { total: 0, reserved: 0, available: 0, valid_until: null })
    const refused = await run(
      Effect.flip(sendMessage(client, `late-${randomUUID()}`, { to: "+261340000001", text: "Too late" }))
    )
    assert.equal(refused._tag, "InsufficientCredits")
  })
})
