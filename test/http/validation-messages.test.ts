/**
 * What a refused body says (docs/integrators.md#errors): each detail names its field and what the
 * field allows, in the service's words, never the schema library's ("Expected MessageCreate",
 * "Expected a value with a length of at least 1", "Missing key"); the error's message says the
 * same of every field. The common cases of each body: a missing field, a wrong type, an empty
 * string, an unknown enum value, a body that is no JSON object.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, withApp } from "../support/TestApp.ts"
import { withWebhooks } from "../webhooks/support.ts"
import { expectError } from "./helpers.ts"

const messages = "/api/sms/v2/messages/"
const batches = "/api/sms/v2/message-batches/"
const contacts = "/api/sms/v2/contacts/"
const webhooks = "/api/sms/v2/webhooks/"
const sendAt = "2099-01-01T00:00:00Z"
const to = "+261340000001"
const eventTypes =
  "message.accepted, message.delivered, message.undeliverable, message.failed, message.blocked, message.unknown, batch.completed, message.received, contact.opted_out, contact.opted_in"

type Detail = { readonly field: string; readonly message: string }
const cases: ReadonlyArray<readonly [what: string, path: string, body: unknown, details: ReadonlyArray<Detail>]> = [
  ["a message without text", messages, { to }, [{ field: "text", message: "is required" }]],
  [
    "a message without any field",
    messages,
    {},
    [
      { field: "text", message: "is required" },
      { field: "to", message: "is required" }
    ]
  ],
  [
    "a message whose text is a number",
    messages,
    { to, text: 5 },
    [{ field: "text", message: "must be a string of 1 to 320 characters" }]
  ],
  [
    "a message whose text is empty",
    messages,
    { to, text: "" },
    [{ field: "text", message: "must be a string of 1 to 320 characters" }]
  ],
  [
    "a message whose number is a number",
    messages,
    { to: 261340000001, text: "a" },
    [{ field: "to", message: "must be a Malagasy mobile number: +2613 followed by 8 digits" }]
  ],
  [
    "a message whose send_at is a number",
    messages,
    { to, text: "a", send_at: 5 },
    [{ field: "send_at", message: "must be an RFC 3339 date-time with a timezone offset" }]
  ],
  [
    "a message with an unknown field",
    messages,
    { to, text: "a", extra: 1 },
    [{ field: "extra", message: "is not a known field" }]
  ],
  ["a message body that is an array", messages, [1], [{ field: "body", message: "must be a JSON object" }]],
  ["a message body that is a string", messages, "x", [{ field: "body", message: "must be a JSON object" }]],
  ["a message body that is null", messages, null, [{ field: "body", message: "must be a JSON object" }]],
  [
    "a batch without recipients",
    batches,
    { recipients: [], text: "a", send_at: sendAt },
    [{ field: "recipients", message: "must list 1 to 1000 phone numbers" }]
  ],
  [
    "a batch whose recipients are a string",
    batches,
    { recipients: to, text: "a", send_at: sendAt },
    [{ field: "recipients", message: "must be an array of 1 to 1000 items" }]
  ],
  [
    "a batch whose recipient is a number",
    batches,
    { recipients: [5], text: "a", send_at: sendAt },
    [{ field: "recipients.0", message: "must be a Malagasy mobile number: +2613 followed by 8 digits" }]
  ],
  ["a batch without send_at", batches, { recipients: [to], text: "a" }, [{ field: "send_at", message: "is required" }]],
  ["a batch body that is an array", batches, [], [{ field: "body", message: "must be a JSON object" }]],
  ["a contact without its number", contacts, {}, [{ field: "phone_number", message: "is required" }]],
  [
    "a contact whose status is text",
    contacts,
    { phone_number: to, status: "x" },
    [{ field: "status", message: "must be an integer (int64)" }]
  ],
  [
    "a contact whose list_name is empty",
    contacts,
    { phone_number: to, list_name: "" },
    [{ field: "list_name", message: "must be a string of 1 to 100 characters" }]
  ],
  [
    "a contact whose first_name is a number",
    contacts,
    { phone_number: to, first_name: 3 },
    [{ field: "first_name", message: "must be a string of at most 100 characters or null" }]
  ],
  [
    "a contact whose first_name is too long",
    contacts,
    { phone_number: to, first_name: "a".repeat(101) },
    [{ field: "first_name", message: "must be a string of at most 100 characters" }]
  ],
  ["a contact body that is an array", contacts, [1], [{ field: "body", message: "must be a JSON object" }]],
  ["a webhook without url", webhooks, {}, [{ field: "url", message: "is required" }]],
  ["a webhook whose url is a number", webhooks, { url: 4 }, [{ field: "url", message: "must be a string" }]],
  [
    "a webhook with an unknown event type",
    webhooks,
    { url: "http://127.0.0.1:9/h", events: ["message.exploded"] },
    [{ field: "events.0", message: `must be one of ${eventTypes}` }]
  ],
  [
    "a webhook with no event type",
    webhooks,
    { url: "http://127.0.0.1:9/h", events: [] },
    [{ field: "events", message: "must list at least one event type (leave it out for every type)" }]
  ],
  [
    "a webhook whose description is a number",
    webhooks,
    { url: "http://127.0.0.1:9/h", description: 4 },
    [{ field: "description", message: "must be a string of at most 500 characters or null" }]
  ],
  ["a webhook body that is a string", webhooks, "str", [{ field: "body", message: "must be a JSON object" }]]
]

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("validation messages", { timeout: 120_000 }, () => {
  withApp()((it) => {
    it.effect("name each field and what it allows, in the service's words", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10, permissions: withWebhooks })
        let n = 0
        for (const [what, path, body, details] of cases) {
          const res = yield* app.call("POST", path, {
            token: apiKey,
            body,
            headers: { "idempotency-key": `validation-messages-${++n}` }
          })
          const error = expectError(res, 400, "validation_error")
          expect(error.details, what).toEqual(details)
          expect(error.message, what).toBe(details.map((d) => `${d.field} ${d.message}`).join("; "))
          expect(res.text, what).not.toMatch(/Expected|Missing key|MessageCreate|BatchCreate|WebhookCreate/)
        }
      })
    )

    it.effect("GET / points to the docs page, the OpenAPI document and the console", () =>
      Effect.gen(function* () {
        const app = yield* App
        const root = yield* app.call("GET", "/")
        expect(root.status, root.text).toBe(200)
        expect(root.headers.get("content-type")).toMatch(/^application\/json/)
        expect(root.body).toEqual({
          service: "sms-service",
          api: "/api/sms/v2/",
          docs: "/api/sms/v2/docs",
          openapi: "/api/sms/v2/openapi.json",
          console: "/console",
          health: "/health"
        })
        // each answers
        for (const path of [root.body.docs, root.body.openapi, root.body.console, root.body.health]) {
          const res = yield* app.call("GET", path, { headers: { accept: "*/*" } })
          expect(res.status, path).toBe(200)
        }
      })
    )
  })
})
