/** The webhook routes (docs/decisions.md#webhooks): every route, its answers and its errors. */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { WebhookEventTypes } from "../../src/domain/Webhooks.ts"
import { expectError, expectValidation } from "../http/helpers.ts"
import { allPermissions, App, withApp } from "../support/TestApp.ts"
import { createEndpoint, newKey, webhookPath, webhooksPath, withWebhooks } from "./support.ts"

// a port nothing listens on: the background deliveries of this suite go nowhere
const url = "http://127.0.0.1:9/hooks"

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("webhook endpoints", { timeout: 120_000 }, () => {
  withApp()((it) => {
    it.effect(
      "creation answers 201 with the secret, Location, all events by default; replays the same answer for the same key",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
          const key = newKey()
          const body = { url, description: "orders" }
          const first = yield* app.call("POST", webhooksPath, {
            token: apiKey,
            headers: { "idempotency-key": key },
            body
          })
          expect(first.status, first.text).toBe(201)
          expect(Object.keys(first.body).sort()).toEqual([
            "created_at",
            "description",
            "enabled",
            "events",
            "id",
            "secret",
            "url"
          ])
          expect(first.body).toMatchObject({
            url,
            description: "orders",
            enabled: true,
            events: [...WebhookEventTypes]
          })
          expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
          expect(Buffer.from(first.body.secret.slice(6), "base64").length).toBe(24)
          expect(first.headers.get("location")).toBe(`/api/sms/v2/webhooks/${first.body.id}/`)
          expect(first.headers.get("cache-control")).toBe("no-store")

          const replay = yield* app.call("POST", webhooksPath, {
            token: apiKey,
            headers: { "idempotency-key": key },
            body
          })
          expect(replay.status).toBe(201)
          expect(replay.body).toEqual(first.body)
          expect(replay.headers.get("idempotent-replayed")).toBe("true")

          const conflict = yield* app.call("POST", webhooksPath, {
            token: apiKey,
            headers: { "idempotency-key": key },
            body: { url: `${url}/other` }
          })
          expectError(conflict, 409, "idempotency_conflict")
          const list = yield* app.call("GET", webhooksPath, { token: apiKey })
          expect(list.body.results.map((e: { id: string }) => e.id)).toEqual([first.body.id])
        })
    )

    it.effect("creation requires an Idempotency-Key", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        expectError(
          yield* app.call("POST", webhooksPath, { token: apiKey, body: { url } }),
          400,
          "invalid_idempotency_key"
        )
      })
    )

    it.effect("list (newest first), read, update, delete never show the secret", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        const a = yield* createEndpoint(apiKey, { url })
        const b = yield* createEndpoint(apiKey, { url, events: ["message.delivered"] })
        const list = yield* app.call("GET", webhooksPath, { token: apiKey })
        expect(list.status).toBe(200)
        // the envelope of every list: results, and next_cursor (null: every endpoint fits in one page)
        expect(Object.keys(list.body).sort()).toEqual(["next_cursor", "results"])
        expect(list.body.next_cursor).toBeNull()
        expect(list.body.results.map((e: { id: string }) => e.id)).toEqual([b.id, a.id])
        for (const e of list.body.results) expect(e).not.toHaveProperty("secret")

        const read = yield* app.call("GET", webhookPath(b.id), { token: apiKey })
        expect(read.status).toBe(200)
        expect(read.body).toEqual({
          id: b.id,
          url,
          events: ["message.delivered"],
          description: null,
          enabled: true,
          created_at: read.body.created_at
        })

        const patched = yield* app.call("PATCH", webhookPath(b.id), {
          token: apiKey,
          body: { url: `${url}/v2`, events: ["batch.completed", "message.failed"], description: "d", enabled: false }
        })
        expect(patched.status, patched.text).toBe(200)
        expect(patched.body).toMatchObject({
          url: `${url}/v2`,
          events: ["batch.completed", "message.failed"],
          description: "d",
          enabled: false
        })
        expect(patched.body).not.toHaveProperty("secret")
        const partial = yield* app.call("PATCH", webhookPath(b.id), { token: apiKey, body: { enabled: true } })
        expect(partial.body).toMatchObject({ url: `${url}/v2`, description: "d", enabled: true })

        const deleted = yield* app.call("DELETE", webhookPath(b.id), { token: apiKey })
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")
        expectError(yield* app.call("GET", webhookPath(b.id), { token: apiKey }), 404, "not_found")
        expectError(yield* app.call("DELETE", webhookPath(b.id), { token: apiKey }), 404, "not_found")
      })
    )

    it.effect("rotation gives a new secret; retry and test answer 202; the delivery log pages newest first", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        const e = yield* createEndpoint(apiKey, { url })
        const rotated = yield* app.call("POST", `${webhookPath(e.id)}secret/`, { token: apiKey })
        expect(rotated.status).toBe(200)
        // the answer holds the new secret: no browser or proxy keeps a copy
        expect(rotated.headers.get("cache-control")).toBe("no-store")
        expect(Object.keys(rotated.body)).toEqual(["secret"])
        expect(rotated.body.secret).toMatch(/^whsec_/)
        expect(rotated.body.secret).not.toBe(e.secret)

        const test = yield* app.call("POST", `${webhookPath(e.id)}test/`, { token: apiKey })
        expect(test.status).toBe(202)
        const log = yield* app.call("GET", `${webhookPath(e.id)}deliveries/`, { token: apiKey })
        expect(log.status).toBe(200)
        expect(Object.keys(log.body).sort()).toEqual(["next_cursor", "results"])
        expect(log.body.next_cursor).toBeNull()
        expect(log.body.results).toHaveLength(1)
        const line = log.body.results[0]
        expect(Object.keys(line).sort()).toEqual([
          "attempts",
          "created_at",
          "event_id",
          "last_error",
          "last_status_code",
          "next_attempt_at",
          "state",
          "type"
        ])
        expect(line.type).toBe("webhook.test")
        expect(line.event_id).toMatch(/^evt_[0-9a-f-]{36}$/)

        const retry = yield* app.call("POST", `${webhookPath(e.id)}deliveries/${line.event_id}/retry/`, {
          token: apiKey
        })
        expect(retry.status).toBe(202)
        expectError(
          yield* app.call("POST", `${webhookPath(e.id)}deliveries/evt_00000000-0000-4000-8000-000000000000/retry/`, {
            token: apiKey
          }),
          404,
          "not_found"
        )
        expectError(
          yield* app.call("GET", `${webhookPath(e.id)}deliveries/?cursor=nonsense`, { token: apiKey }),
          400,
          "invalid_cursor"
        )
      })
    )

    it.effect("a key without webhooks.manage gets 403 on every route", () =>
      Effect.gen(function* () {
        const app = yield* App
        const owner = yield* app.newOrg({ permissions: withWebhooks })
        const e = yield* createEndpoint(owner.apiKey, { url })
        const { apiKey } = yield* app.newOrg({ permissions: allPermissions })
        // the same organisation's key without the permission
        const sameOrg = yield* app.admin("POST", `/organizations/${owner.orgId}/api-keys`, {
          permissions: ["delivery.read"]
        })
        for (const token of [apiKey, sameOrg.body.api_key as string]) {
          const calls: Array<[string, string, unknown?]> = [
            ["POST", webhooksPath, { url }],
            ["GET", webhooksPath],
            ["GET", webhookPath(e.id)],
            ["PATCH", webhookPath(e.id), { enabled: false }],
            ["DELETE", webhookPath(e.id)],
            ["POST", `${webhookPath(e.id)}secret/`],
            ["GET", `${webhookPath(e.id)}deliveries/`],
            ["POST", `${webhookPath(e.id)}deliveries/evt_00000000-0000-4000-8000-000000000000/retry/`],
            ["POST", `${webhookPath(e.id)}test/`]
          ]
          for (const [method, path, body] of calls) {
            const res = yield* app.call(method, path, {
              token,
              headers: { "idempotency-key": newKey() },
              ...(body === undefined ? {} : { body })
            })
            expectError(res, 403, "insufficient_permissions")
          }
        }
      })
    )

    it.effect("another organisation's endpoint is 404 on every route", () =>
      Effect.gen(function* () {
        const app = yield* App
        const owner = yield* app.newOrg({ permissions: withWebhooks })
        const e = yield* createEndpoint(owner.apiKey, { url })
        const other = yield* app.newOrg({ permissions: withWebhooks })
        const calls: Array<[string, string, unknown?]> = [
          ["GET", webhookPath(e.id)],
          ["PATCH", webhookPath(e.id), { enabled: false }],
          ["DELETE", webhookPath(e.id)],
          ["POST", `${webhookPath(e.id)}secret/`],
          ["GET", `${webhookPath(e.id)}deliveries/`],
          ["POST", `${webhookPath(e.id)}test/`]
        ]
        for (const [method, path, body] of calls) {
          expectError(
            yield* app.call(method, path, { token: other.apiKey, ...(body === undefined ? {} : { body }) }),
            404,
            "not_found"
          )
        }
        const list = yield* app.call("GET", webhooksPath, { token: other.apiKey })
        expect(list.body.results).toEqual([])
        // still there for its owner, unchanged
        expect((yield* app.call("GET", webhookPath(e.id), { token: owner.apiKey })).body.enabled).toBe(true)
      })
    )

    it.effect("refuses each URL rule and an unknown event type with 400 naming the field", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        const create = (body: unknown) =>
          app.call("POST", webhooksPath, { token: apiKey, headers: { "idempotency-key": newKey() }, body })
        for (const bad of [
          "ftp://example.com/x",
          "/relative/path",
          "not a url",
          "https://user:pass@example.com/x",
          `https://example.com/${"a".repeat(2048)}`
        ]) {
          expect(expectValidation(yield* create({ url: bad })), bad).toEqual(["url"])
        }
        const unknownType = expectValidation(yield* create({ url, events: ["message.delivered", "message.exploded"] }))
        expect(
          unknownType.some((f) => f.startsWith("events")),
          unknownType.join()
        ).toBe(true)
        const { body } = yield* app.call("GET", webhooksPath, { token: apiKey })
        expect(body.results).toEqual([])
        const e = yield* createEndpoint(apiKey, { url })
        expect(
          expectValidation(yield* app.call("PATCH", webhookPath(e.id), { token: apiKey, body: { url: "gopher://x" } }))
        ).toEqual(["url"])
      })
    )

    it.effect("an organisation has at most 10 endpoints", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        for (let i = 0; i < 10; i++) yield* createEndpoint(apiKey, { url: `${url}/${i}` })
        const eleventh = yield* app.call("POST", webhooksPath, {
          token: apiKey,
          headers: { "idempotency-key": newKey() },
          body: { url }
        })
        expectError(eleventh, 400, "validation_error")
        expect((yield* app.call("GET", webhooksPath, { token: apiKey })).body.results).toHaveLength(10)
      })
    )
  })
})
