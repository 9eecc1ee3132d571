// Every string field of both APIs (bodies, path ids, the cursor) refuses NUL and unpaired UTF-16
// surrogates with 400 validation_error naming the field, before any SQL: nothing is stored.
import { randomUUID } from "node:crypto"
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, backend, withApp } from "../support/TestApp.ts"
import { contactsPath, expectError, expectValidation } from "./helpers.ts"

let org: { orgId: string; apiKey: string; keyId: string }
const newOrg = Effect.gen(function* () {
  org = yield* (yield* App).newOrg({ credits: 10, sender: "DEMO" })
})

const bad = [
  ["NUL", "a\u0000b"],
  ["a lone high surrogate", "a\ud800b"],
  ["a lone low surrogate", "\udc00"]
] as const
const future = () => new Date(Date.now() + 86_400_000).toISOString()
const balance = () =>
  Effect.flatMap(App, (app) => app.call("GET", "/api/sms/v2/balance/", { token: org.apiKey })).pipe(
    Effect.map((res) => res.body)
  )

const post = (path: string, body: unknown) =>
  Effect.flatMap(App, (app) =>
    app.call("POST", path, { token: org.apiKey, body, headers: { "idempotency-key": randomUUID() } })
  )

withApp(
  {},
  newOrg
)((it) => {
  describe(`public API bodies (${backend})`, () => {
    const message = { to: "+261341234567", text: "Salama", sender_name: "DEMO", send_at: future() }
    const batch = { recipients: ["+261341234567"], text: "Salama", sender_name: "DEMO", send_at: future() }

    for (const [what, value] of bad) {
      it.effect.each(["text", "to", "sender_name", "send_at"])(
        `POST messages: ${what} in %s is a validation_error naming it; nothing reserved`,
        (field) =>
          Effect.gen(function* () {
            const res = yield* post("/api/sms/v2/messages/", { ...message, [field]: value })
            expect(expectValidation(res)).toEqual([field])
            expect(yield* balance()).toMatchObject({ reserved: 0, available: 10 })
          })
      )

      it.effect.each(["text", "sender_name", "send_at"])(
        `POST message-batches: ${what} in %s is a validation_error naming it`,
        (field) =>
          Effect.gen(function* () {
            expect(expectValidation(yield* post("/api/sms/v2/message-batches/", { ...batch, [field]: value }))).toEqual(
              [field]
            )
          })
      )

      it.effect(`POST message-batches: ${what} in a recipient names its position`, () =>
        Effect.gen(function* () {
          const res = yield* post("/api/sms/v2/message-batches/", { ...batch, recipients: ["+261341234567", value] })
          expect(expectValidation(res)).toEqual(["recipients.1"])
        })
      )
    }

    it.effect("a well-formed surrogate pair (an emoji) is text like any other", () =>
      Effect.gen(function* () {
        const res = yield* post("/api/sms/v2/messages/", { ...message, text: "Salama 😀" })
        expect(res.status, res.text).toBe(202)
      })
    )
  })

  describe(`contacts, parsed losslessly by their own handler (${backend})`, () => {
    const fields = ["first_name", "company", "position", "address", "home_email", "office_email", "list_name", "source"]
    let seq = 0
    const phone = () => `+26132${String(++seq).padStart(7, "0")}`
    const upsertRaw = (raw: string) =>
      Effect.flatMap(App, (app) => app.call("POST", contactsPath, { token: org.apiKey, raw }))

    for (const escaped of ["\\u0000", "\\ud800", "\\udfff", "x\\ud800\\ud800\\udc00"]) {
      it.effect.each(fields)(`the JSON escape "${escaped}" in %s is a validation_error naming it`, (field) =>
        Effect.gen(function* () {
          const res = yield* upsertRaw(`{"phone_number": "${phone()}", "${field}": "${escaped}"}`)
          expect(expectValidation(res)).toEqual([field])
        })
      )
    }

    it.effect("a lone surrogate in list_name is refused, not stored as U+FFFD", () =>
      Effect.gen(function* () {
        const number = phone()
        expect(expectValidation(yield* upsertRaw(`{"phone_number": "${number}", "list_name": "VIP\\ud83d"}`))).toEqual([
          "list_name"
        ])
        // nothing was stored: the first valid write creates the contact
        const created = yield* upsertRaw(`{"phone_number": "${number}", "list_name": "VIP"}`)
        expect(created.status, created.text).toBe(201)
        expect(created.body.list_name).toBe("VIP")
      })
    )

    it.effect("a raw NUL character in a phone_number is a validation_error naming it", () =>
      Effect.gen(function* () {
        expect(expectValidation(yield* upsertRaw(`{"phone_number": "+2613\\u00001234567"}`))).toEqual(["phone_number"])
      })
    )
  })

  describe(`path ids and the cursor (${backend})`, () => {
    it.effect.each([
      ["/api/sms/v2/messages/%00/", "message_id"],
      ["/api/sms/v2/messages/%ED%A0%80/", "message_id"],
      ["/api/sms/v2/messages/ab%C3/", "message_id"],
      ["/api/sms/v2/message-batches/%00/", "batch_id"],
      ["/api/sms/v2/message-batches/%ED%B0%80/", "batch_id"],
      ["/api/sms/v2/message-batches/%00/messages/", "batch_id"],
      [`/api/sms/v2/message-batches/${randomUUID()}/messages/?cursor=%00`, "cursor"]
    ])("GET %s: 400 validation_error naming %s", ([path, field]) =>
      Effect.gen(function* () {
        const app = yield* App
        expect(expectValidation(yield* app.call("GET", path, { token: org.apiKey }))).toEqual([field])
      })
    )

    it.effect.each([
      "/api/sms/v2/messages/not-a-uuid/",
      "/api/sms/v2/messages/%EF%BF%BD/",
      "/api/sms/v2/message-batches/12345/"
    ])("a well-formed id that is not a uuid stays 404 (%s)", (path) =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.call("GET", path, { token: org.apiKey }), 404, "not_found")
      })
    )

    it.effect.each([
      ["GET", "/api/sms/v2/messages/ID/", "message_id"],
      ["HEAD", "/api/sms/v2/messages/ID/", "message_id"],
      ["GET", "/api/sms/v2/message-batches/ID/messages/", "batch_id"]
    ])(
      "a path id longer than the router takes (100 characters) is judged like any other: %s %s",
      ([method, path, field]) =>
        Effect.gen(function* () {
          const app = yield* App
          const nul = yield* app.call(method, path.replace("ID", "%00".repeat(101)), { token: org.apiKey })
          if (method === "HEAD") expect(nul.status).toBe(400)
          else expect(expectValidation(nul)).toEqual([field])
          const long = yield* app.call(method, path.replace("ID", "x".repeat(101)), { token: org.apiKey })
          if (method === "HEAD") expect(long.status).toBe(404)
          else expectError(long, 404, "not_found")
        })
    )

    it.effect("a bad path id is refused before the permission check, like any other validation", () =>
      Effect.gen(function* () {
        const app = yield* App
        const other = yield* app.newOrg({ permissions: ["balance.read"] })
        expect(expectValidation(yield* app.call("GET", "/api/sms/v2/messages/%00/", { token: other.apiKey }))).toEqual([
          "message_id"
        ])
      })
    )
  })

  describe(`operator API (${backend})`, () => {
    for (const [what, value] of bad) {
      it.effect(`POST /organizations: ${what} in name is a validation_error naming it`, () =>
        Effect.gen(function* () {
          const app = yield* App
          expect(expectValidation(yield* app.admin("POST", "/organizations", { name: value }))).toEqual(["name"])
        })
      )
    }

    it.effect.each([
      ["GET", "/organizations/%00", "org_id"],
      ["PATCH", "/organizations/%ED%A0%80", "org_id"],
      ["POST", "/organizations/%00/api-keys", "org_id"],
      ["POST", "/organizations/%00/credits", "org_id"],
      ["POST", "/api-keys/%00/revoke", "key_id"],
      ["POST", "/api-keys/%ED%A0%80/revoke", "key_id"],
      ["PUT", "/organizations/ORG/senders/A%00B", "name"],
      ["GET", "/organizations/ORG/messages/%00", "message_id"],
      ["POST", "/organizations/ORG/messages/%ED%A0%80/erasure", "message_id"]
    ])("%s %s: 400 validation_error naming %s", ([method, path, field]) =>
      Effect.gen(function* () {
        const app = yield* App
        const body =
          method === "GET"
            ? undefined
            : path.endsWith("credits")
              ? { amount: 1 }
              : path.includes("senders")
                ? { active: true }
                : method === "POST" && path.endsWith("api-keys")
                  ? { permissions: [] }
                  : {}
        const res = yield* app.admin(method, path.replace("ORG", org.orgId), body)
        expect(expectValidation(res)).toEqual([field])
      })
    )

    it.effect("a path id longer than the router takes: a NUL in it is a validation_error naming it, else 404", () =>
      Effect.gen(function* () {
        const app = yield* App
        expect(expectValidation(yield* app.admin("GET", `/organizations/${"%00".repeat(101)}`))).toEqual(["org_id"])
        expectError(yield* app.admin("GET", `/organizations/${"x".repeat(101)}`), 404, "not_found")
      })
    )

    it.effect("a well-formed unknown key id stays 404", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("POST", "/api-keys/nope/revoke"), 404, "not_found")
      })
    )
  })
})
