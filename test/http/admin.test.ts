/** The operator API under /admin/v1 (docs/operators.md#operator-api-and-cli). */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { adminToken, App, backend, withApp } from "../support/TestApp.ts"
import { balancePath, expectError, expectValidation, utcDate } from "./helpers.ts"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const apiKeyPattern = /^svc_sms_[a-z0-9]{20}\.[A-Za-z0-9_-]{43}$/
const unknownUuid = "00000000-0000-4000-8000-000000000000"

const createOrg = (body: Record<string, unknown> = { name: "Acme" }) =>
  Effect.gen(function* () {
    const app = yield* App
    const res = yield* app.admin("POST", "/organizations", body)
    expect(res.status, res.text).toBe(201)
    return res.body as { id: string; name: string; sms_enabled: boolean; default_sender_name: string }
  })

withApp()((it) => {
  describe(`organisations (${backend})`, () => {
    it.effect("creates an organisation with sender INFO by default", () =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.admin("POST", "/organizations", { name: "Vary Export" })
        expect(res.status).toBe(201)
        expect(res.body).toEqual({
          id: res.body.id,
          name: "Vary Export",
          sms_enabled: true,
          default_sender_name: "INFO",
          retention_days: null
        })
        expect(res.body.id).toMatch(uuidPattern)
      })
    )

    it.effect("honours a custom default sender name", () =>
      Effect.gen(function* () {
        const org = yield* createOrg({ name: "Shop", default_sender_name: "MY SHOP" })
        expect(org).toMatchObject({ name: "Shop", sms_enabled: true, default_sender_name: "MY SHOP" })
      })
    )

    it.effect("two organisations get different ids", () =>
      Effect.gen(function* () {
        expect((yield* createOrg()).id).not.toBe((yield* createOrg()).id)
      })
    )

    it.effect.each(["BAD!", "TWELVECHARSX", " LEADING", "TRAILING ", "", "é"])(
      "rejects the sender name %j with 400",
      (name) =>
        Effect.gen(function* () {
          const app = yield* App
          const res = yield* app.admin("POST", "/organizations", { name: "X", default_sender_name: name })
          expect(expectValidation(res)).toContain("default_sender_name")
        })
    )

    it.effect("rejects a missing or empty name, and an unknown field", () =>
      Effect.gen(function* () {
        const app = yield* App
        expect(expectValidation(yield* app.admin("POST", "/organizations", {}))).toContain("name")
        expect(expectValidation(yield* app.admin("POST", "/organizations", { name: "" }))).toContain("name")
        expect(expectValidation(yield* app.admin("POST", "/organizations", { name: "Y", plan: "gold" }))).toContain(
          "plan"
        )
      })
    )

    it.effect("GET answers the organisation with its balance", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg({ name: "Reader", default_sender_name: "READ" })
        const res = yield* app.admin("GET", `/organizations/${org.id}`)
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ ...org, balance: { total: 0, reserved: 0, available: 0, valid_until: null } })
      })
    )

    it.effect.each([unknownUuid, "not-an-id", "123"])("GET an unknown organisation %s: 404 not_found", (id) =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("GET", `/organizations/${id}`), 404, "not_found")
      })
    )

    it.effect("PATCH sms_enabled and default_sender_name", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        const off = yield* app.admin("PATCH", `/organizations/${org.id}`, { sms_enabled: false })
        expect(off.status, off.text).toBe(200)
        expect(off.body).toEqual({ ...org, sms_enabled: false })
        const renamed = yield* app.admin("PATCH", `/organizations/${org.id}`, { default_sender_name: "NEWS" })
        expect(renamed.status).toBe(200)
        expect(renamed.body).toEqual({ ...org, sms_enabled: false, default_sender_name: "NEWS" })
        const read = yield* app.admin("GET", `/organizations/${org.id}`)
        expect(read.body).toMatchObject({ sms_enabled: false, default_sender_name: "NEWS" })
        const on = yield* app.admin("PATCH", `/organizations/${org.id}`, { sms_enabled: true })
        expect(on.body).toEqual({ ...org, sms_enabled: true, default_sender_name: "NEWS" })
      })
    )

    it.effect("PATCH retention_days: a number of days shown in the answer, null back to the service's default", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        const kept = yield* app.admin("PATCH", `/organizations/${org.id}`, { retention_days: 30 })
        expect(kept.status, kept.text).toBe(200)
        expect(kept.body).toEqual({ ...org, retention_days: 30 })
        expect((yield* app.admin("GET", `/organizations/${org.id}`)).body).toMatchObject({ retention_days: 30 })
        // a change of something else keeps it
        expect((yield* app.admin("PATCH", `/organizations/${org.id}`, { sms_enabled: false })).body).toMatchObject({
          retention_days: 30
        })
        const reset = yield* app.admin("PATCH", `/organizations/${org.id}`, { retention_days: null })
        expect(reset.body).toEqual({ ...org, sms_enabled: false, retention_days: null })
        for (const bad of [0, -1, 1.5, "30"]) {
          expect(
            expectValidation(yield* app.admin("PATCH", `/organizations/${org.id}`, { retention_days: bad }))
          ).toContain("retention_days")
        }
      })
    )

    it.effect("PATCH rejects bad values and unknown organisations", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        expect(
          expectValidation(yield* app.admin("PATCH", `/organizations/${org.id}`, { default_sender_name: "NO!" }))
        ).toContain("default_sender_name")
        expect(
          expectValidation(yield* app.admin("PATCH", `/organizations/${org.id}`, { sms_enabled: "yes" }))
        ).toContain("sms_enabled")
        expectError(
          yield* app.admin("PATCH", `/organizations/${unknownUuid}`, { sms_enabled: false }),
          404,
          "not_found"
        )
      })
    )
  })

  describe(`API keys (${backend})`, () => {
    it.effect("issues a key: 201, the svc_sms_ format, permissions echoed, and the key works", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        const res = yield* app.admin("POST", `/organizations/${org.id}/api-keys`, {
          permissions: ["balance.read", "contacts.manage"]
        })
        expect(res.status, res.text).toBe(201)
        expect(Object.keys(res.body).sort()).toEqual(["api_key", "key_id", "permissions"])
        expect(res.body.api_key).toMatch(apiKeyPattern)
        expect(res.body.api_key.startsWith(`svc_sms_${res.body.key_id}.`)).toBe(true)
        expect([...res.body.permissions].sort()).toEqual(["balance.read", "contacts.manage"])
        expect((yield* app.call("GET", balancePath, { token: res.body.api_key })).status).toBe(200)
      })
    )

    it.effect("two keys differ", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        const a = yield* app.admin("POST", `/organizations/${org.id}/api-keys`, { permissions: [] })
        const b = yield* app.admin("POST", `/organizations/${org.id}/api-keys`, { permissions: [] })
        expect(a.status).toBe(201)
        expect(a.body.key_id).not.toBe(b.body.key_id)
        expect(a.body.api_key).not.toBe(b.body.api_key)
      })
    )

    it.effect("rejects an unknown permission or a missing list with 400, an unknown organisation with 404", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        expectValidation(
          yield* app.admin("POST", `/organizations/${org.id}/api-keys`, { permissions: ["sms.send", "admin.all"] })
        )
        expect(expectValidation(yield* app.admin("POST", `/organizations/${org.id}/api-keys`, {}))).toContain(
          "permissions"
        )
        expectError(
          yield* app.admin("POST", `/organizations/${unknownUuid}/api-keys`, { permissions: ["balance.read"] }),
          404,
          "not_found"
        )
      })
    )

    it.effect("revokes a key (200), which then answers 401", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey, keyId } = yield* app.newOrg()
        const res = yield* app.admin("POST", `/api-keys/${keyId}/revoke`)
        expect(res.status, res.text).toBe(200)
        expectError(yield* app.call("GET", balancePath, { token: apiKey }), 401, "invalid_api_key")
      })
    )

    it.effect("revoking an unknown key id: 404 not_found", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("POST", `/api-keys/${"z".repeat(20)}/revoke`), 404, "not_found")
        expectError(yield* app.admin("POST", "/api-keys/nonsense/revoke"), 404, "not_found")
      })
    )
  })

  describe(`credits (${backend})`, () => {
    it.effect("grants credits: 201 with the balance", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        const first = yield* app.admin("POST", `/organizations/${org.id}/credits`, { amount: 50 })
        expect(first.status, first.text).toBe(201)
        expect(first.body).toEqual({ balance: { total: 50, reserved: 0, available: 50, valid_until: null } })
        const until = utcDate(60)
        const second = yield* app.admin("POST", `/organizations/${org.id}/credits`, { amount: 5, valid_until: until })
        expect(second.status).toBe(201)
        expect(second.body).toEqual({ balance: { total: 55, reserved: 0, available: 55, valid_until: until } })
      })
    )

    it.effect.each([
      ["amount 0", { amount: 0 }, "amount"],
      ["a negative amount", { amount: -5 }, "amount"],
      ["a fractional amount", { amount: 1.5 }, "amount"],
      ["a string amount", { amount: "10" }, "amount"],
      ["no amount", {}, "amount"],
      ["valid_until in the past", { amount: 10, valid_until: "2000-01-01" }, "valid_until"],
      ["valid_until yesterday", { amount: 10, valid_until: utcDate(-1) }, "valid_until"],
      ["a garbage valid_until", { amount: 10, valid_until: "soon" }, "valid_until"],
      ["an impossible valid_until", { amount: 10, valid_until: "2099-02-30" }, "valid_until"],
      ["a date-time valid_until", { amount: 10, valid_until: "2099-01-01T00:00:00Z" }, "valid_until"]
    ])("400 validation_error for %s, nothing granted", ([_name, body, field]) =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        expect(expectValidation(yield* app.admin("POST", `/organizations/${org.id}/credits`, body))).toContain(field)
        expect((yield* app.admin("GET", `/organizations/${org.id}`)).body.balance.total).toBe(0)
      })
    )

    it.effect("granting to an unknown organisation: 404", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("POST", `/organizations/${unknownUuid}/credits`, { amount: 1 }), 404, "not_found")
      })
    )
  })

  describe(`senders (${backend})`, () => {
    it.effect("PUT creates then updates a sender: 200 {name, active}", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        const created = yield* app.admin("PUT", `/organizations/${org.id}/senders/PROMO`, { active: true })
        expect(created.status, created.text).toBe(200)
        expect(created.body).toEqual({ name: "PROMO", active: true })
        const off = yield* app.admin("PUT", `/organizations/${org.id}/senders/PROMO`, { active: false })
        expect(off.status).toBe(200)
        expect(off.body).toEqual({ name: "PROMO", active: false })
      })
    )

    it.effect("accepts an encoded internal space in the name", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        const res = yield* app.admin("PUT", `/organizations/${org.id}/senders/MY%20SHOP`, { active: true })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({ name: "MY SHOP", active: true })
      })
    )

    it.effect("rejects an invalid name, a bad body and an unknown organisation", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg()
        expectError(
          yield* app.admin("PUT", `/organizations/${org.id}/senders/WAYTOOLONGNAME`, { active: true }),
          400,
          "validation_error"
        )
        expect(
          expectValidation(yield* app.admin("PUT", `/organizations/${org.id}/senders/OK`, { active: "yes" }))
        ).toContain("active")
        expectError(
          yield* app.admin("PUT", `/organizations/${unknownUuid}/senders/OK`, { active: true }),
          404,
          "not_found"
        )
      })
    )
  })

  describe(`operator authentication (${backend})`, () => {
    it.effect.each<readonly [string, Record<string, string>]>([
      ["no token", {}],
      ["a wrong token", { authorization: `Bearer ${adminToken}x` }],
      ["the token under Basic", { authorization: `Basic ${adminToken}` }],
      ["an empty bearer", { authorization: "Bearer" }]
    ])("401 invalid_api_key with %s", ([_name, headers]) =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(
          yield* app.call("POST", "/admin/v1/organizations", { body: { name: "Nope" }, headers }),
          401,
          "invalid_api_key"
        )
        expectError(
          yield* app.call("GET", `/admin/v1/organizations/${unknownUuid}`, { headers }),
          401,
          "invalid_api_key"
        )
      })
    )

    it.effect("unknown admin route 404, wrong method 405", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("GET", "/nothing"), 404, "not_found")
        const org = yield* createOrg()
        const res = yield* app.admin("DELETE", `/organizations/${org.id}`)
        expectError(res, 405, "method_not_allowed")
        expect(res.headers.get("allow") ?? "").toMatch(/GET/)
      })
    )
  })
})
