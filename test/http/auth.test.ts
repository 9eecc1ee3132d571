/** docs/integrators.md#authentication and docs/operators.md#operator-api-and-cli: who may call what, and the 401/400/403 answers otherwise. */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { adminToken, App, backend, withApp } from "../support/TestApp.ts"
import { balancePath, contactsPath, expectError, expectPlainError } from "./helpers.ts"

let org: { orgId: string; apiKey: string; keyId: string }
const newOrg = Effect.gen(function* () {
  org = yield* (yield* App).newOrg({ credits: 5 })
})

const contactBody = { phone_number: "+261340000100" }
const endpoints = [
  { name: "GET balance", method: "GET", path: balancePath, body: undefined },
  { name: "POST contacts", method: "POST", path: contactsPath, body: contactBody }
] as const

/** Calls an endpoint with a raw Authorization header value (or none). */
const withAuthorization = (
  ep: (typeof endpoints)[number],
  authorization: string | undefined,
  headers: Record<string, string> = {}
) =>
  Effect.flatMap(App, (app) =>
    app.call(ep.method, ep.path, {
      ...(ep.body === undefined ? {} : { body: ep.body }),
      headers: { ...headers, ...(authorization === undefined ? {} : { authorization }) }
    })
  )

withApp(
  {},
  newOrg
)((it) => {
  describe(`authentication (${backend})`, () => {
    const badHeaders: ReadonlyArray<readonly [string, () => string | undefined]> = [
      ["no Authorization header", () => undefined],
      ["Basic scheme", () => `Basic ${Buffer.from("user:pass").toString("base64")}`],
      ["Basic scheme carrying a valid key", () => `Basic ${org.apiKey}`],
      ["Bearer with nothing", () => "Bearer"],
      ["Bearer with only spaces", () => "Bearer    "],
      ["malformed key", () => "Bearer svc_sms_abc.def"],
      [
        "key with an upper-case key id",
        () =>
          `Bearer ${org.apiKey.replace(/^svc_sms_[a-z0-9]{20}/, (s) => s.toUpperCase().replace("SVC_SMS_", "svc_sms_"))}`
      ],
      ["legacy-looking key without the svc_sms_ prefix", () => `Bearer ${org.apiKey.slice("svc_sms_".length)}`],
      ["legacy-looking opaque key", () => "Bearer 0123456789abcdef0123456789abcdef"],
      [
        "JWT-looking token",
        () =>
          "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwib3JnIjoiYWNtZSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
      ],
      [
        "right key id with a wrong secret",
        () => {
          const [id, secret] = org.apiKey.split(".") as [string, string]
          return `Bearer ${id}.${secret.startsWith("A") ? "B" : "A"}${secret.slice(1)}`
        }
      ],
      ["unknown key id with a well-formed secret", () => `Bearer svc_sms_${"0".repeat(20)}.${"A".repeat(43)}`],
      ["valid key with trailing garbage", () => `Bearer ${org.apiKey}x`],
      ["operator token", () => `Bearer ${adminToken}`]
    ]

    for (const ep of endpoints) {
      describe(ep.name, () => {
        it.effect.each(badHeaders)("401 invalid_api_key with %s", ([_name, header]) =>
          Effect.gen(function* () {
            expectPlainError(yield* withAuthorization(ep, header()), 401, "invalid_api_key")
          })
        )

        it.effect("accepts the valid key (control)", () =>
          Effect.gen(function* () {
            const res = yield* withAuthorization(ep, `Bearer ${org.apiKey}`)
            expect([200, 201]).toContain(res.status)
          })
        )

        it.effect("400 invalid_organization_header with a valid key and X-Organization", () =>
          Effect.gen(function* () {
            expectPlainError(
              yield* withAuthorization(ep, `Bearer ${org.apiKey}`, { "x-organization": org.orgId }),
              400,
              "invalid_organization_header"
            )
          })
        )
      })
    }

    it.effect("a revoked key answers 401 invalid_api_key on both endpoints", () =>
      Effect.gen(function* () {
        const app = yield* App
        const victim = yield* app.newOrg({ credits: 3 })
        expect((yield* app.call("GET", balancePath, { token: victim.apiKey })).status).toBe(200)
        const revoke = yield* app.admin("POST", `/api-keys/${victim.keyId}/revoke`)
        expect(revoke.status).toBe(200)
        expectPlainError(yield* app.call("GET", balancePath, { token: victim.apiKey }), 401, "invalid_api_key")
        expectPlainError(
          yield* app.call("POST", contactsPath, { token: victim.apiKey, body: contactBody }),
          401,
          "invalid_api_key"
        )
      })
    )

    it.effect("revoking one key leaves the organisation's other keys working", () =>
      Effect.gen(function* () {
        const app = yield* App
        const first = yield* app.newOrg()
        const second = yield* app.admin("POST", `/organizations/${first.orgId}/api-keys`, {
          permissions: ["balance.read"]
        })
        expect(second.status).toBe(201)
        expect((yield* app.admin("POST", `/api-keys/${first.keyId}/revoke`)).status).toBe(200)
        expect((yield* app.call("GET", balancePath, { token: second.body.api_key })).status).toBe(200)
      })
    )

    it.effect("a customer API key is refused on /admin/v1 (401)", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(
          yield* app.call("GET", `/admin/v1/organizations/${org.orgId}`, { token: org.apiKey }),
          401,
          "invalid_api_key"
        )
        expectError(
          yield* app.call("POST", "/admin/v1/organizations", { token: org.apiKey, body: { name: "Sneaky" } }),
          401,
          "invalid_api_key"
        )
      })
    )
  })

  describe(`permissions (${backend})`, () => {
    const all = ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"] as const
    const without = (p: (typeof all)[number]) => all.filter((q) => q !== p)

    it.effect("403 insufficient_permissions on balance without balance.read", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: without("balance.read") })
        expectPlainError(yield* app.call("GET", balancePath, { token: apiKey }), 403, "insufficient_permissions")
      })
    )

    it.effect("403 insufficient_permissions on contacts without contacts.manage", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: without("contacts.manage") })
        expectPlainError(
          yield* app.call("POST", contactsPath, { token: apiKey, body: contactBody }),
          403,
          "insufficient_permissions"
        )
      })
    )

    it.effect("a key with no permission at all gets 403 on both", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: [] })
        expectPlainError(yield* app.call("GET", balancePath, { token: apiKey }), 403, "insufficient_permissions")
        expectPlainError(
          yield* app.call("POST", contactsPath, { token: apiKey, body: contactBody }),
          403,
          "insufficient_permissions"
        )
      })
    )

    it.effect("200 on balance with a key holding only balance.read", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 2, permissions: ["balance.read"] })
        const res = yield* app.call("GET", balancePath, { token: apiKey })
        expect(res.status).toBe(200)
        expect(res.body.total).toBe(2)
      })
    )

    it.effect("201 on contacts with a key holding only contacts.manage", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: ["contacts.manage"] })
        const res = yield* app.call("POST", contactsPath, { token: apiKey, body: contactBody })
        expect(res.status).toBe(201)
        expect(res.body.phone_number).toBe(contactBody.phone_number)
      })
    )
  })
})
