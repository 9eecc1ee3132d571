/**
 * POST /api/sms/v2/messages/ and GET /api/sms/v2/messages/{id}/ over HTTP (docs/integrators.md#messages,
 * 4.4, 4.7, 7 erasure, 3 credits, 4 idempotency, 5 simulator numbers). The app runs
 * in-process without background workers, so a message stays where its immediate answer left it.
 */
import { randomUUID } from "node:crypto"
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { balancePath, expectError, expectPlainError, expectValidation } from "../http/helpers.ts"
import { App, backend, type Reply, withApp } from "../support/TestApp.ts"

const messagesPath = "/api/sms/v2/messages/"
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ordinary = "+261341234567"
/** 160 GSM-7 characters fit one segment, 161 need two, 307 need three. */
const twoSegmentText = "a".repeat(200)

type Body = Record<string, unknown>

const newKey = () => `k-${randomUUID()}`

/** POST /messages/ with a JSON body (or a raw one) and an Idempotency-Key (null: no header). */
const post = (
  apiKey: string,
  body: Body | { raw: string },
  key: string | null = newKey(),
  headers: Record<string, string> = {}
) =>
  Effect.flatMap(App, (app) =>
    app.call("POST", messagesPath, {
      token: apiKey,
      ...("raw" in body && typeof body.raw === "string" ? { raw: body.raw } : { body }),
      headers: { ...headers, ...(key === null ? {} : { "idempotency-key": key }) }
    })
  )

const getMessage = (apiKey: string, id: string) =>
  Effect.flatMap(App, (app) => app.call("GET", `${messagesPath}${id}/`, { token: apiKey }))

/** The organisation's balance through the operator API (works whatever the key's permissions). */
const balanceOf = (orgId: string) =>
  Effect.gen(function* () {
    const app = yield* App
    const res = yield* app.admin("GET", `/organizations/${orgId}`)
    expect(res.status, res.text).toBe(200)
    return res.body.balance as { total: number; reserved: number; available: number; valid_until: string | null }
  })

/** The message as the operator sees it, with its timeline. */
const adminMessage = (orgId: string, id: string) =>
  Effect.gen(function* () {
    const app = yield* App
    const res = yield* app.admin("GET", `/organizations/${orgId}/messages/${id}`)
    expect(res.status, res.text).toBe(200)
    return res.body
  })

const future = (ms = 86_400_000) => new Date(Date.now() + ms).toISOString()

/** Asserts a docs/integrators.md#messages Message body and returns it. */
const expectMessage = (body: Body, expected: Partial<Record<string, unknown>>) => {
  expect(Object.keys(body).sort()).toEqual([
    "delivery_time",
    "id",
    "segments",
    "send_at",
    "sender_name",
    "status",
    "to"
  ])
  expect(body.id).toMatch(uuidPattern)
  expect(body).toMatchObject(expected)
  return body
}

/** Asserts a failure that carries message_id (docs/integrators.md#errors) and returns the message id. */
const expectFailureWithId = (res: Reply, status: number, code: string): string => {
  expect({ status: res.status, code: res.body?.error?.code }, res.text).toEqual({ status, code })
  expect(Object.keys(res.body).sort()).toEqual(["error", "message_id"])
  expect(Object.keys(res.body.error).sort()).toEqual(["code", "message"])
  expect(res.body.error.message.length).toBeGreaterThan(0)
  expect(res.body.message_id).toMatch(uuidPattern)
  expect(res.headers.get("location")).toBeNull()
  return res.body.message_id
}

const expectReplayOf = (replay: Reply, first: Reply) => {
  expect(replay.status, replay.text).toBe(first.status)
  expect(replay.body).toEqual(first.body)
  expect(replay.headers.get("location")).toBe(first.headers.get("location"))
  expect(replay.headers.get("idempotent-replayed")).toBe("true")
}

withApp({ config: { simulatorSlowMs: 50 } })((it) => {
  describe(`POST messages: success (${backend})`, () => {
    it.effect("201 with Location for an ordinary number: accepted, default sender, one credit consumed", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const res = yield* post(apiKey, { to: ordinary, text: "Salama!" })
        expect(res.status, res.text).toBe(201)
        expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
        expect(res.headers.get("idempotent-replayed")).toBeNull()
        const body = expectMessage(res.body, {
          to: ordinary,
          sender_name: "INFO",
          status: "accepted",
          segments: 1,
          send_at: null,
          delivery_time: null
        })
        expect(res.headers.get("location")).toBe(`/api/sms/v2/messages/${body.id}/`)
        expect(yield* balanceOf(orgId)).toEqual({ total: 9, reserved: 0, available: 9, valid_until: null })

        const read = yield* getMessage(apiKey, body.id as string)
        expect(read.status, read.text).toBe(200)
        expect(read.body).toEqual(body)
      })
    )

    it.effect("201 with a registered sender name and a two-segment text consumes two credits", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/MY%20SHOP`, { active: true })).status).toBe(
          200
        )
        const res = yield* post(apiKey, { to: ordinary, text: twoSegmentText, sender_name: "MY SHOP" })
        expect(res.status, res.text).toBe(201)
        expectMessage(res.body, { sender_name: "MY SHOP", segments: 2, status: "accepted" })
        expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 0, available: 3, valid_until: null })
      })
    )

    it.effect("202 with Location for send_at: scheduled, credits reserved in GET balance, readable", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const sendAt = future()
        const res = yield* post(apiKey, { to: ordinary, text: twoSegmentText, send_at: sendAt })
        expect(res.status, res.text).toBe(202)
        const body = expectMessage(res.body, { to: ordinary, status: "scheduled", segments: 2, delivery_time: null })
        expect(new Date(body.send_at as string).getTime()).toBe(new Date(sendAt).getTime())
        expect(res.headers.get("location")).toBe(`/api/sms/v2/messages/${body.id}/`)

        const balance = yield* app.call("GET", balancePath, { token: apiKey })
        expect(balance.status).toBe(200)
        expect(balance.body).toEqual({ total: 10, reserved: 2, available: 8, valid_until: null })

        const read = yield* getMessage(apiKey, body.id as string)
        expect(read.status).toBe(200)
        expect(read.body).toEqual(body)
      })
    )

    it.effect("202 for a send_at with a non-UTC offset keeps the same instant", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 1 })
        const res = yield* post(apiKey, { to: ordinary, text: "later", send_at: "2099-06-01T15:00:00+03:00" })
        expect(res.status, res.text).toBe(202)
        expect(new Date(res.body.send_at).toISOString()).toBe("2099-06-01T12:00:00.000Z")
      })
    )

    it.effect("a 128-character visible-ASCII Idempotency-Key is accepted", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 1 })
        const key = `!~${"x".repeat(125)}}`
        expect(key.length).toBe(128)
        expect((yield* post(apiKey, { to: ordinary, text: "hi" }, key)).status).toBe(201)
      })
    )
  })

  describe(`POST messages: request errors (${backend})`, () => {
    it.effect.each<readonly [string, Body, string]>([
      ["a bad phone number", { to: "0341234567", text: "hi" }, "to"],
      ["a non-Malagasy number", { to: "+262341234567", text: "hi" }, "to"],
      ["a 12-character number", { to: "+26134123456", text: "hi" }, "to"],
      ["a number with a space", { to: "+261 341234567", text: "hi" }, "to"],
      ["an empty text", { to: ordinary, text: "" }, "text"],
      ["a non-string text", { to: ordinary, text: 12 }, "text"],
      ["an unknown field", { to: ordinary, text: "hi", priority: "high" }, "priority"],
      ["a missing to", { text: "hi" }, "to"],
      ["a missing text", { to: ordinary }, "text"],
      ["a garbage send_at", { to: ordinary, text: "hi", send_at: "tomorrow" }, "send_at"]
    ])("400 validation_error for %s, naming the field; nothing reserved or stored", ([_name, body, field]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 3 })
        const key = newKey()
        expect(expectValidation(yield* post(apiKey, body, key))).toContain(field)
        expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 0, available: 3, valid_until: null })
        // not stored: the key is still free for a (valid) request
        expect((yield* post(apiKey, { to: ordinary, text: "fixed" }, key)).status).toBe(201)
      })
    )

    it.effect("400 validation_error for a three-segment text (307 'a'), naming text and the segment count", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const res = yield* post(apiKey, { to: ordinary, text: "a".repeat(307) })
        expect(expectValidation(res)).toEqual(["text"])
        const detail = res.body.error.details[0].message as string
        expect(detail).toMatch(/3 segments/)
        expect(detail).toMatch(/GSM/)
        expect((yield* balanceOf(orgId)).reserved).toBe(0)
        // 306 'a' is two segments and passes
        expect((yield* post(apiKey, { to: ordinary, text: "a".repeat(306) })).status).toBe(201)
      })
    )

    it.effect("400 validation_error for a UCS-2 text of three segments names the forcing character", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 5 })
        const res = yield* post(apiKey, { to: ordinary, text: "ж".repeat(135) })
        expect(expectValidation(res)).toEqual(["text"])
        expect(res.body.error.details[0].message).toMatch(/3 segments.*UCS-2|UCS-2.*3 segments/)
        expect(res.body.error.details[0].message).toContain("ж")
      })
    )

    it.effect.each([
      ["not JSON", "{not json"],
      ["a truncated object", '{"to": "+261341234567", "text": '],
      ["a trailing comma", `{"to": "${ordinary}", "text": "hi",}`]
    ])("400 parse_error for %s; not stored", ([_name, raw]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 1 })
        const key = newKey()
        expectPlainError(yield* post(apiKey, { raw }, key), 400, "parse_error")
        expect((yield* post(apiKey, { to: ordinary, text: "fixed" }, key)).status).toBe(201)
      })
    )

    it.effect.each([
      ["missing", null],
      ["empty", ""],
      ["129 characters", "k".repeat(129)],
      ["containing a space", "my key"],
      ["non-ASCII", "clé-1"]
    ])("400 invalid_idempotency_key when the key is %s; nothing reserved", ([_name, key]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 2 })
        expectPlainError(yield* post(apiKey, { to: ordinary, text: "hi" }, key), 400, "invalid_idempotency_key")
        expect(yield* balanceOf(orgId)).toEqual({ total: 2, reserved: 0, available: 2, valid_until: null })
      })
    )

    it.effect.each([
      ["a past send_at", "2020-01-01T00:00:00Z"],
      ["a send_at a second ago", new Date(Date.now() - 1000).toISOString()]
    ])("400 invalid_schedule for %s; nothing reserved, not stored", ([_name, sendAt]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 2 })
        const key = newKey()
        expectError(yield* post(apiKey, { to: ordinary, text: "hi", send_at: sendAt }, key), 400, "invalid_schedule")
        expect(yield* balanceOf(orgId)).toEqual({ total: 2, reserved: 0, available: 2, valid_until: null })
        // not stored: an identical retry runs again (and is refused again); a corrected request under the key is admitted
        expectError(yield* post(apiKey, { to: ordinary, text: "hi", send_at: sendAt }, key), 400, "invalid_schedule")
        expect((yield* post(apiKey, { to: ordinary, text: "hi", send_at: future() }, key)).status).toBe(202)
      })
    )

    it.effect.each([
      ["without offset", "2030-01-01T10:00:00", "explicit timezone offset"],
      ["without offset, space separated", "2030-01-01 10:00", "explicit timezone offset"],
      ["that is not a timestamp", "tomorrow at noon", "RFC 3339"],
      ["in the year 10000 in UTC", "9999-12-31T23:59:59-23:59", "at most 9999-12-31T23:59:59Z"]
    ])("400 validation_error naming send_at for a send_at %s; nothing reserved", ([_name, sendAt, says]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 2 })
        const res = yield* post(apiKey, { to: ordinary, text: "hi", send_at: sendAt }, newKey())
        expect(expectValidation(res)).toEqual(["send_at"])
        expect(res.body.error.details[0].message).toContain(says)
        expect(yield* balanceOf(orgId)).toEqual({ total: 2, reserved: 0, available: 2, valid_until: null })
      })
    )

    it.effect.each([
      ["with a symbol", "BAD_NAME!"],
      ["of 12 characters", "TWELVECHARSX"],
      ["with a leading space", " INFO"],
      ["empty", ""]
    ])("400 invalid_sender_name for a sender %s; nothing reserved", ([_name, sender]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 2 })
        expectError(yield* post(apiKey, { to: ordinary, text: "hi", sender_name: sender }), 400, "invalid_sender_name")
        expect((yield* balanceOf(orgId)).reserved).toBe(0)
      })
    )

    it.effect("401 invalid_api_key without a key or with a wrong one", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectPlainError(
          yield* app.call("POST", messagesPath, {
            body: { to: ordinary, text: "hi" },
            headers: { "idempotency-key": newKey() }
          }),
          401,
          "invalid_api_key"
        )
        expectPlainError(
          yield* post(`svc_sms_${"0".repeat(20)}.${"A".repeat(43)}`, { to: ordinary, text: "hi" }),
          401,
          "invalid_api_key"
        )
      })
    )

    it.effect("400 invalid_organization_header when X-Organization is sent", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 1 })
        expectPlainError(
          yield* post(apiKey, { to: ordinary, text: "hi" }, newKey(), { "x-organization": orgId }),
          400,
          "invalid_organization_header"
        )
        expect((yield* balanceOf(orgId)).available).toBe(1)
      })
    )
  })

  describe(`POST messages: permissions and availability (${backend})`, () => {
    it.effect("403 insufficient_permissions for an immediate send without sms.send (sms.schedule is not enough)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({
          credits: 2,
          permissions: ["sms.schedule", "delivery.read", "balance.read"]
        })
        expectPlainError(yield* post(apiKey, { to: ordinary, text: "hi" }), 403, "insufficient_permissions")
        expect((yield* balanceOf(orgId)).available).toBe(2)
        // the same key may schedule
        expect((yield* post(apiKey, { to: ordinary, text: "hi", send_at: future() })).status).toBe(202)
      })
    )

    it.effect("403 insufficient_permissions for a scheduled send without sms.schedule (sms.send is not enough)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 2, permissions: ["sms.send"] })
        expectPlainError(
          yield* post(apiKey, { to: ordinary, text: "hi", send_at: future() }),
          403,
          "insufficient_permissions"
        )
        expect((yield* balanceOf(orgId)).available).toBe(2)
        expect((yield* post(apiKey, { to: ordinary, text: "hi" })).status).toBe(201)
      })
    )

    it.effect("403 sms_unavailable when the organisation's SMS is disabled; not stored, nothing reserved", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 3 })
        expect((yield* app.admin("PATCH", `/organizations/${orgId}`, { sms_enabled: false })).status).toBe(200)
        const key = newKey()
        expectPlainError(yield* post(apiKey, { to: ordinary, text: "hi" }, key), 403, "sms_unavailable")
        expectPlainError(yield* post(apiKey, { to: ordinary, text: "hi", send_at: future() }), 403, "sms_unavailable")
        expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 0, available: 3, valid_until: null })
        expect((yield* app.admin("PATCH", `/organizations/${orgId}`, { sms_enabled: true })).status).toBe(200)
        const retry = yield* post(apiKey, { to: ordinary, text: "hi" }, key)
        expect(retry.status, retry.text).toBe(201)
        expect(retry.headers.get("idempotent-replayed")).toBeNull()
      })
    )

    it.effect("403 sender_name_unavailable (no message_id) for an unregistered sender; not stored", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 3 })
        const key = newKey()
        expectPlainError(
          yield* post(apiKey, { to: ordinary, text: "hi", sender_name: "NOPE" }, key),
          403,
          "sender_name_unavailable"
        )
        expectPlainError(
          yield* post(apiKey, { to: ordinary, text: "hi", sender_name: "NOPE", send_at: future() }),
          403,
          "sender_name_unavailable"
        )
        expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 0, available: 3, valid_until: null })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/NOPE`, { active: true })).status).toBe(200)
        const retry = yield* post(apiKey, { to: ordinary, text: "hi", sender_name: "NOPE" }, key)
        expect(retry.status, retry.text).toBe(201)
        expect(retry.body.sender_name).toBe("NOPE")
      })
    )

    it.effect(
      "403 sender_name_unavailable for a sender deactivated through PUT senders, including the default one",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 3 })
          expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: true })).status).toBe(200)
          expect((yield* post(apiKey, { to: ordinary, text: "hi", sender_name: "PROMO" })).status).toBe(201)
          expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: false })).status).toBe(200)
          expectPlainError(
            yield* post(apiKey, { to: ordinary, text: "hi", sender_name: "PROMO" }),
            403,
            "sender_name_unavailable"
          )
          expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/INFO`, { active: false })).status).toBe(200)
          expectPlainError(
            yield* post(apiKey, { to: ordinary, text: "no sender given" }),
            403,
            "sender_name_unavailable"
          )
          expect(yield* balanceOf(orgId)).toEqual({ total: 2, reserved: 0, available: 2, valid_until: null })
        })
    )

    it.effect.each<readonly [string, number, string]>([
      ["no credit and a one-segment text", 0, "hi"],
      ["one credit and a two-segment text", 1, twoSegmentText]
    ])("409 insufficient_credits with %s; balance unchanged, not stored", ([_name, credits, text]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits })
        const before = yield* balanceOf(orgId)
        const key = newKey()
        expectPlainError(yield* post(apiKey, { to: ordinary, text }, key), 409, "insufficient_credits")
        expectPlainError(yield* post(apiKey, { to: ordinary, text, send_at: future() }), 409, "insufficient_credits")
        expect(yield* balanceOf(orgId)).toEqual(before)
        expect((yield* app.admin("POST", `/organizations/${orgId}/credits`, { amount: 2 })).status).toBe(201)
        expect((yield* post(apiKey, { to: ordinary, text }, key)).status).toBe(201)
      })
    )
  })

  describe(`GET message (${backend})`, () => {
    it.effect("200 for the organisation's own message; 403 without delivery.read", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 2 })
        const sent = yield* post(apiKey, { to: ordinary, text: "hi" })
        expect(sent.status).toBe(201)
        const read = yield* getMessage(apiKey, sent.body.id)
        expect(read.status).toBe(200)
        expect(read.body).toEqual(sent.body)
        const limited = yield* app.admin("POST", `/organizations/${orgId}/api-keys`, {
          permissions: ["sms.send", "sms.schedule", "balance.read"]
        })
        expect(limited.status).toBe(201)
        expectPlainError(yield* getMessage(limited.body.api_key, sent.body.id), 403, "insufficient_permissions")
      })
    )

    it.effect("404 not_found for another organisation's message, an unknown uuid and a garbage id", () =>
      Effect.gen(function* () {
        const app = yield* App
        const a = yield* app.newOrg({ credits: 2 })
        const b = yield* app.newOrg({ credits: 2 })
        const sent = yield* post(a.apiKey, { to: ordinary, text: "hi" })
        expect(sent.status).toBe(201)
        expectPlainError(yield* getMessage(b.apiKey, sent.body.id), 404, "not_found")
        expectPlainError(yield* getMessage(a.apiKey, randomUUID()), 404, "not_found")
        expectPlainError(yield* getMessage(a.apiKey, "not-a-uuid"), 404, "not_found")
        expectPlainError(yield* getMessage(a.apiKey, "1"), 404, "not_found")
      })
    )
  })

  describe(`simulator numbers, immediate answers and credits (${backend})`, () => {
    it.effect.each([
      ["01 (delivered later)", testNumbers.delivered],
      ["02 (undeliverable later)", testNumbers.undeliverable],
      ["06 (no receipt ever)", testNumbers.acceptedNoReceipt],
      ["07 (slow acceptance)", testNumbers.slow]
    ])("%s: 201 accepted, credits consumed", ([_name, to]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const started = Date.now()
        const res = yield* post(apiKey, { to, text: twoSegmentText })
        expect(res.status, res.text).toBe(201)
        if (to === testNumbers.slow) expect(Date.now() - started).toBeGreaterThanOrEqual(45)
        expectMessage(res.body, { to, status: "accepted", segments: 2 })
        expect(res.headers.get("location")).toBe(`/api/sms/v2/messages/${res.body.id}/`)
        expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 0, available: 3, valid_until: null })
        expect((yield* getMessage(apiKey, res.body.id)).body.status).toBe("accepted")
      })
    )

    it.effect("03: 502 provider_rejected with message_id; the message is failed and its credits released", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const res = yield* post(apiKey, { to: testNumbers.rejected, text: twoSegmentText })
        const id = expectFailureWithId(res, 502, "provider_rejected")
        const read = yield* getMessage(apiKey, id)
        expect(read.status).toBe(200)
        expectMessage(read.body, { id, to: testNumbers.rejected, status: "failed", segments: 2, delivery_time: null })
        expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 0, available: 5, valid_until: null })
        const timeline = (yield* adminMessage(orgId, id)).timeline
        expect(timeline.map((t: Body) => [t.from_status, t.to_status, t.source])).toEqual([
          [null, "processing", "admission"],
          ["processing", "failed", "provider"]
        ])
      })
    )

    it.effect.each([
      ["04 (verified accepted later)", testNumbers.unknownThenAccepted],
      ["08 (verified never received later)", testNumbers.unknownNeverReceived],
      ["09 (unknown for good)", testNumbers.unknownForGood]
    ])("%s: 502 provider_result_unknown with message_id; unknown, credits still reserved", ([_name, to]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const res = yield* post(apiKey, { to, text: twoSegmentText })
        const id = expectFailureWithId(res, 502, "provider_result_unknown")
        expectMessage((yield* getMessage(apiKey, id)).body, { id, to, status: "unknown", segments: 2 })
        expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 2, available: 3, valid_until: null })
      })
    )

    it.effect("05: 503 dispatch_unavailable with message_id; the message is failed and its credits released", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const res = yield* post(apiKey, { to: testNumbers.unreachable, text: twoSegmentText })
        const id = expectFailureWithId(res, 503, "dispatch_unavailable")
        expectMessage((yield* getMessage(apiKey, id)).body, { id, status: "failed" })
        expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 0, available: 5, valid_until: null })
      })
    )

    it.effect("a scheduled message to a simulator number is only reserved at admission (no immediate outcome)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const res = yield* post(apiKey, { to: testNumbers.rejected, text: "hi", send_at: future() })
        expect(res.status, res.text).toBe(202)
        expect(res.body.status).toBe("scheduled")
        expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 1, available: 4, valid_until: null })
      })
    )
  })

  describe(`idempotency (${backend})`, () => {
    it.effect(
      "a replay of a 201 returns the same status, body and Location with Idempotent-Replayed: true, and moves no credit",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
          const key = newKey()
          const body = { to: ordinary, text: "once only" }
          const first = yield* post(apiKey, body, key)
          expect(first.status).toBe(201)
          const balance = yield* balanceOf(orgId)
          expect(balance.available).toBe(4)
          for (let i = 0; i < 2; i++) expectReplayOf(yield* post(apiKey, body, key), first)
          expect(yield* balanceOf(orgId)).toEqual(balance)
        })
    )

    it.effect("a replay of a 202 returns the original answer and reserves nothing more", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const key = newKey()
        const body = { to: ordinary, text: twoSegmentText, send_at: future() }
        const first = yield* post(apiKey, body, key)
        expect(first.status).toBe(202)
        expectReplayOf(yield* post(apiKey, body, key), first)
        expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 2, available: 3, valid_until: null })
      })
    )

    it.effect.each<readonly [string, string, { total: number; reserved: number; available: number }]>([
      ["502 provider_rejected", testNumbers.rejected, { total: 5, reserved: 0, available: 5 }],
      ["502 provider_result_unknown", testNumbers.unknownForGood, { total: 5, reserved: 2, available: 3 }],
      ["503 dispatch_unavailable", testNumbers.unreachable, { total: 5, reserved: 0, available: 5 }]
    ])("a stored %s answer replays as first given, without a new send or credit movement", ([_name, to, balance]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const key = newKey()
        const body = { to, text: twoSegmentText }
        const first = yield* post(apiKey, body, key)
        expect([502, 503]).toContain(first.status)
        expect(first.body.message_id).toMatch(uuidPattern)
        const replay = yield* post(apiKey, body, key)
        expectReplayOf(replay, first)
        expect(replay.body.message_id).toBe(first.body.message_id)
        expect(yield* balanceOf(orgId)).toEqual({ ...balance, valid_until: null })
        // still exactly one submission: the timeline has one admission and one provider outcome
        const timeline = (yield* adminMessage(orgId, first.body.message_id)).timeline
        expect(timeline.map((t: Body) => t.source)).toEqual(["admission", "provider"])
      })
    )

    it.effect(
      "an identical request while the first is still with the provider: 409 idempotency_in_progress, one send",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
          const key = newKey()
          const body = { to: testNumbers.slow, text: "slow one" }
          const [x, y] = yield* Effect.all([post(apiKey, body, key), post(apiKey, body, key)], {
            concurrency: "unbounded"
          })
          const [first, second] = x.status === 201 ? [x, y] : [y, x]
          expect(first.status, first.text).toBe(201)
          expectPlainError(second, 409, "idempotency_in_progress")
          expect(yield* balanceOf(orgId)).toEqual({ total: 4, reserved: 0, available: 4, valid_until: null })
          expectReplayOf(yield* post(apiKey, body, key), first)
        })
    )

    it.effect(
      "the same key with a different body: 409 idempotency_conflict (text, recipient, send_at); no credit moves",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
          const key = newKey()
          const first = yield* post(apiKey, { to: ordinary, text: "hello" }, key)
          expect(first.status).toBe(201)
          const balance = yield* balanceOf(orgId)
          expectPlainError(yield* post(apiKey, { to: ordinary, text: "hello!" }, key), 409, "idempotency_conflict")
          expectPlainError(yield* post(apiKey, { to: ordinary, text: "hello " }, key), 409, "idempotency_conflict")
          expectPlainError(
            yield* post(apiKey, { to: "+261341234568", text: "hello" }, key),
            409,
            "idempotency_conflict"
          )
          expectPlainError(
            yield* post(apiKey, { to: ordinary, text: "hello", sender_name: "INFO" }, key),
            409,
            "idempotency_conflict"
          )
          expectPlainError(
            yield* post(apiKey, { to: ordinary, text: "hello", send_at: future() }, key),
            409,
            "idempotency_conflict"
          )
          expect(yield* balanceOf(orgId)).toEqual(balance)
        })
    )

    it.effect("the same key with a different body after a stored failure: 409 idempotency_conflict", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 5 })
        const key = newKey()
        expect((yield* post(apiKey, { to: testNumbers.rejected, text: "x" }, key)).status).toBe(502)
        expectPlainError(yield* post(apiKey, { to: ordinary, text: "x" }, key), 409, "idempotency_conflict")
      })
    )

    it.effect("key order and whitespace do not matter: the same content replays", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const key = newKey()
        const first = yield* post(apiKey, { raw: `{"text":"ordre","to":"${ordinary}","sender_name":"INFO"}` }, key)
        expect(first.status, first.text).toBe(201)
        const replay = yield* post(
          apiKey,
          { raw: `{\n  "sender_name" : "INFO",\n\t"to":   "${ordinary}" ,  "text" : "ordre"\n}\n` },
          key
        )
        expectReplayOf(replay, first)
        expect((yield* balanceOf(orgId)).available).toBe(4)
      })
    )

    it.effect("the same key in two organisations: two independent messages", () =>
      Effect.gen(function* () {
        const app = yield* App
        const a = yield* app.newOrg({ credits: 2 })
        const b = yield* app.newOrg({ credits: 2 })
        const key = newKey()
        const body = { to: ordinary, text: "shared key" }
        const ra = yield* post(a.apiKey, body, key)
        const rb = yield* post(b.apiKey, body, key)
        expect([ra.status, rb.status]).toEqual([201, 201])
        expect(ra.headers.get("idempotent-replayed")).toBeNull()
        expect(rb.headers.get("idempotent-replayed")).toBeNull()
        expect(ra.body.id).not.toBe(rb.body.id)
        expect((yield* balanceOf(a.orgId)).available).toBe(1)
        expect((yield* balanceOf(b.orgId)).available).toBe(1)
        // and a different body under that key in organisation B conflicts only with B's own request
        expectPlainError(yield* post(b.apiKey, { to: ordinary, text: "other" }, key), 409, "idempotency_conflict")
      })
    )

    it.effect("the same key on POST message-batches is independent of POST messages", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const key = newKey()
        const message = yield* post(apiKey, { to: ordinary, text: "route one" }, key)
        expect(message.status).toBe(201)
        const batch = yield* app.call("POST", "/api/sms/v2/message-batches/", {
          token: apiKey,
          headers: { "idempotency-key": key },
          body: { recipients: [ordinary, "+261341234568"], text: "route two", send_at: future() }
        })
        expect(batch.status, batch.text).toBe(202)
        expect(batch.headers.get("idempotent-replayed")).toBeNull()
        expect(yield* balanceOf(orgId)).toEqual({ total: 4, reserved: 2, available: 2, valid_until: null })
        // and the message key still replays its own answer
        expectReplayOf(yield* post(apiKey, { to: ordinary, text: "route one" }, key), message)
      })
    )
  })

  describe(`erasure and 410 (${backend})`, () => {
    const erase = (orgId: string, id: string) =>
      Effect.flatMap(App, (app) => app.admin("POST", `/organizations/${orgId}/messages/${id}/erasure`))

    it.effect(
      "after erasure of a finished message its original POST replays 410 personal_data_erased; another body still 409",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
          const key = newKey()
          const body = { to: testNumbers.rejected, text: "secret text" }
          const first = yield* post(apiKey, body, key)
          const id = expectFailureWithId(first, 502, "provider_rejected")
          const balance = yield* balanceOf(orgId)

          const erased = yield* erase(orgId, id)
          expect(erased.status, erased.text).toBe(200)
          expectMessage(erased.body, { id, to: "", sender_name: "", status: "failed", segments: 1 })

          const read = yield* getMessage(apiKey, id)
          expect(read.status).toBe(200)
          expect(read.body).toEqual(erased.body)

          for (let i = 0; i < 2; i++) {
            const replay = yield* post(apiKey, body, key)
            expectError(replay, 410, "personal_data_erased")
            expect(replay.body.error.message).toMatch(/new key/i)
            expect(replay.text).not.toContain(testNumbers.rejected)
          }
          expectPlainError(yield* post(apiKey, { to: ordinary, text: "secret text" }, key), 409, "idempotency_conflict")
          expect(yield* balanceOf(orgId)).toEqual(balance)

          // the operator's view keeps the timeline and shows the blanks
          const view = yield* adminMessage(orgId, id)
          expect(view).toMatchObject({ id, to: "", sender_name: "", status: "failed" })
          expect(view.timeline.length).toBeGreaterThanOrEqual(2)
        })
    )

    it.effect("erasure of a 503 dispatch_unavailable (failed) message: 410 on replay", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const key = newKey()
        const body = { to: testNumbers.unreachable, text: "x", sender_name: "INFO" }
        const id = expectFailureWithId(yield* post(apiKey, body, key), 503, "dispatch_unavailable")
        expect((yield* erase(orgId, id)).status).toBe(200)
        expectError(yield* post(apiKey, body, key), 410, "personal_data_erased")
      })
    )

    it.effect(
      "409 erasure_not_allowed for an unfinished message (scheduled, unknown, accepted); data kept, replay unchanged",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
          const scheduledKey = newKey()
          const scheduledBody = { to: ordinary, text: "later", send_at: future() }
          const scheduled = yield* post(apiKey, scheduledBody, scheduledKey)
          expect(scheduled.status).toBe(202)
          const unknown = yield* post(apiKey, { to: testNumbers.unknownForGood, text: "?" })
          expect(unknown.status).toBe(502)
          const accepted = yield* post(apiKey, { to: ordinary, text: "sent" })
          expect(accepted.status).toBe(201)

          for (const id of [scheduled.body.id, unknown.body.message_id, accepted.body.id]) {
            expectPlainError(yield* erase(orgId, id), 409, "erasure_not_allowed")
            expect((yield* getMessage(apiKey, id)).body.to).not.toBe("")
          }
          expectReplayOf(yield* post(apiKey, scheduledBody, scheduledKey), scheduled)
          expect((yield* getMessage(apiKey, scheduled.body.id)).body).toEqual(scheduled.body)
        })
    )

    it.effect("404 for erasure of an unknown message or another organisation's", () =>
      Effect.gen(function* () {
        const app = yield* App
        const a = yield* app.newOrg({ credits: 2 })
        const b = yield* app.newOrg({ credits: 2 })
        const id = expectFailureWithId(
          yield* post(a.apiKey, { to: testNumbers.rejected, text: "x" }),
          502,
          "provider_rejected"
        )
        expectError(yield* erase(b.orgId, id), 404, "not_found")
        expectError(yield* erase(a.orgId, randomUUID()), 404, "not_found")
        expect((yield* getMessage(a.apiKey, id)).body.to).toBe(testNumbers.rejected)
      })
    )
  })
})
