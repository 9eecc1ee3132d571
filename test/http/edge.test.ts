/** What answers outside the handlers: routing, content negotiation, limits, health and docs (docs/integrators.md#errors). */
import { describe, expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { App, backend, withApp } from "../support/TestApp.ts"
import { balancePath, contactsPath, expectError } from "./helpers.ts"

let apiKey: string
const newOrg = Effect.gen(function* () {
  apiKey = (yield* (yield* App).newOrg({ credits: 1 })).apiKey
})

const allowOf = (res: { headers: Headers }) =>
  (res.headers.get("allow") ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m !== "")

withApp(
  {},
  newOrg
)((it) => {
  describe(`routing (${backend})`, () => {
    it.effect.each(["/api/sms/v2/nope/", "/api/sms/v3/balance/", "/nothing", "/api/sms/v2/balance/extra/"])(
      "404 not_found for GET %s",
      (path) =>
        Effect.gen(function* () {
          const app = yield* App
          expectError(yield* app.call("GET", path, { token: apiKey }), 404, "not_found")
        })
    )

    it.effect("405 method_not_allowed for DELETE balance, with Allow: GET", () =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.call("DELETE", balancePath, { token: apiKey })
        expectError(res, 405, "method_not_allowed")
        expect(allowOf(res)).toContain("GET")
        expect(allowOf(res)).not.toContain("DELETE")
      })
    )

    it.effect("405 for POST balance and GET contacts, each with its Allow header", () =>
      Effect.gen(function* () {
        const app = yield* App
        const post = yield* app.call("POST", balancePath, { token: apiKey, body: {} })
        expectError(post, 405, "method_not_allowed")
        expect(allowOf(post)).toContain("GET")
        const get = yield* app.call("GET", contactsPath, { token: apiKey })
        expectError(get, 405, "method_not_allowed")
        expect(allowOf(get)).toEqual(["POST"])
      })
    )
  })

  describe(`content negotiation and limits (${backend})`, () => {
    it.effect("406 not_acceptable for Accept: text/html on balance", () =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.call("GET", balancePath, { token: apiKey, headers: { accept: "text/html" } })
        expectError(res, 406, "not_acceptable")
      })
    )

    it.effect.each(["application/json", "*/*", "application/json; charset=utf-8", "text/html, application/json;q=0.5"])(
      "200 for Accept: %s",
      (accept) =>
        Effect.gen(function* () {
          const app = yield* App
          const res = yield* app.call("GET", balancePath, { token: apiKey, headers: { accept } })
          expect(res.status, res.text).toBe(200)
          expect(res.body.total).toBe(1)
        })
    )

    it.effect("413 payload_too_large for a contact body over 64 KiB", () =>
      Effect.gen(function* () {
        const app = yield* App
        const body = JSON.stringify({ phone_number: "+261340000001", address: "x".repeat(70 * 1024) })
        expect(body.length).toBeGreaterThan(64 * 1024)
        expectError(yield* app.call("POST", contactsPath, { token: apiKey, raw: body }), 413, "payload_too_large")
      })
    )

    it.effect("a contact body just under 64 KiB is accepted", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey: key } = yield* app.newOrg({ permissions: ["contacts.manage"] })
        const body = JSON.stringify({ phone_number: "+261340000001", address: "x".repeat(60 * 1024) })
        const res = yield* app.call("POST", contactsPath, { token: key, raw: body })
        expect(res.status, res.text.slice(0, 200)).toBe(201)
      })
    )
  })

  describe(`health (${backend})`, () => {
    it.effect("GET /health answers 200", () =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.call("GET", "/health")
        expect(res.status).toBe(200)
      })
    )

    it.effect("GET /ready answers 200 with the database up, naming the provider's routes", () =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.call("GET", "/ready")
        expect({ status: res.status, body: res.body }).toEqual({
          status: 200,
          body: { status: "ready", routes: [{ route: "sim", connected: true, detail: "in-process simulator" }] }
        })
      })
    )
  })

  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON document
  let doc: any
  const readDoc = Effect.gen(function* () {
    const res = yield* (yield* App).call("GET", "/api/sms/v2/openapi.json")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
    doc = res.body
  })

  it.layer(Layer.effectDiscard(readDoc))(`OpenAPI document and docs (${backend})`, (it) => {
    it("is OpenAPI 3.1 at version 2.0.2", () => {
      expect(String(doc.openapi)).toMatch(/^3\.1\./)
      expect(doc.info.version).toBe("2.0.2")
    })

    it("describes GET balance and POST contacts", () => {
      expect(doc.paths["/api/sms/v2/balance/"]?.get).toBeDefined()
      expect(doc.paths["/api/sms/v2/contacts/"]?.post).toBeDefined()
    })

    it.each([
      ["/api/sms/v2/balance/", "get", ["200"]],
      ["/api/sms/v2/contacts/", "post", ["200", "201"]]
    ])("%s %s lists its success and the error statuses", (path, method, success) => {
      const statuses = Object.keys(doc.paths[path][method].responses)
      for (const s of [...success, "400", "401", "403", "404", "415", "500", "503"])
        expect(statuses, `${path} ${s}`).toContain(s)
    })

    it.effect("is readable without a key", () =>
      Effect.gen(function* () {
        const app = yield* App
        expect((yield* app.call("GET", "/api/sms/v2/openapi.json")).status).toBe(200)
      })
    )

    it.effect("GET /api/sms/v2/docs is an HTML page that needs no external script", () =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.call("GET", "/api/sms/v2/docs", { headers: { accept: "text/html" } })
        expect(res.status).toBe(200)
        expect(res.headers.get("content-type") ?? "").toMatch(/^text\/html/)
        expect(res.text).toMatch(/<html/i)
        expect(res.text).not.toContain('<script src="http')
        expect(res.text).not.toMatch(/<script[^>]*\ssrc\s*=\s*["']?(https?:)?\/\//i)
        expect(res.text).not.toMatch(/<link[^>]*\shref\s*=\s*["']?(https?:)?\/\//i)
      })
    )
  })

  describe(`headers of every answer (${backend})`, () => {
    it.effect(
      "X-Content-Type-Options: nosniff on answers of every kind: API, operator, errors, health, docs, console, metrics",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId } = yield* app.newOrg({ credits: 1 })
          const replies = [
            yield* app.call("GET", balancePath, { token: apiKey }),
            yield* app.call("POST", "/api/sms/v2/messages/", {
              token: apiKey,
              body: { to: "+261340000001", text: "x" },
              headers: { "idempotency-key": `nosniff-${orgId}` }
            }),
            yield* app.call("GET", balancePath),
            yield* app.call("GET", "/api/sms/v2/nope/", { token: apiKey }),
            yield* app.call("DELETE", balancePath, { token: apiKey }),
            yield* app.call("GET", balancePath, { token: apiKey, headers: { accept: "text/html" } }),
            yield* app.call("POST", contactsPath, { token: apiKey, raw: "x".repeat(70 * 1024) }),
            yield* app.admin("GET", `/organizations/${orgId}`),
            yield* app.call("GET", "/health"),
            yield* app.call("GET", "/api/sms/v2/openapi.json"),
            yield* app.call("GET", "/api/sms/v2/docs", { headers: { accept: "text/html" } }),
            yield* app.call("GET", "/console", { headers: { accept: "text/html" } }),
            yield* app.call("GET", "/metrics")
          ]
          expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200, 201, 401, 404, 405, 406, 413]))
          for (const reply of replies)
            expect(reply.headers.get("x-content-type-options"), `${reply.status} ${reply.text.slice(0, 80)}`).toBe(
              "nosniff"
            )
        })
    )

    it.effect("Cache-Control: no-store on the answer that holds a new API key, and not on others", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 1 })
        const issued = yield* app.admin("POST", `/organizations/${orgId}/api-keys`, { permissions: ["balance.read"] })
        expect(issued.status, issued.text).toBe(201)
        expect(issued.body.api_key).toMatch(/^svc_sms_/)
        expect(issued.headers.get("cache-control")).toBe("no-store")
        const listed = yield* app.admin("GET", `/organizations/${orgId}/api-keys`)
        expect(listed.status).toBe(200)
        expect(listed.headers.get("cache-control")).toBeNull()
        expect((yield* app.call("GET", balancePath, { token: apiKey })).headers.get("cache-control")).toBeNull()
      })
    )
  })
})
