/** What answers outside the handlers: routing, content negotiation, limits, health and docs (spec 7, 9). */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backend, makeTestApp } from "../support/TestApp.ts"
import { balancePath, contactsPath, expectError } from "./helpers.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

let apiKey: string
beforeAll(async () => {
  apiKey = (await app.newOrg({ credits: 1 })).apiKey
})

const allowOf = (res: { headers: Headers }) =>
  (res.headers.get("allow") ?? "").split(",").map((m) => m.trim()).filter((m) => m !== "")

describe(`routing (${backend})`, () => {
  it.each(["/api/sms/v2/nope/", "/api/sms/v3/balance/", "/nothing", "/api/sms/v2/balance/extra/"])("404 not_found for GET %s", async (path) => {
    expectError(await app.call("GET", path, { token: apiKey }), 404, "not_found")
  })

  it("405 method_not_allowed for DELETE balance, with Allow: GET", async () => {
    const res = await app.call("DELETE", balancePath, { token: apiKey })
    expectError(res, 405, "method_not_allowed")
    expect(allowOf(res)).toContain("GET")
    expect(allowOf(res)).not.toContain("DELETE")
  })

  it("405 for POST balance and GET contacts, each with its Allow header", async () => {
    const post = await app.call("POST", balancePath, { token: apiKey, body: {} })
    expectError(post, 405, "method_not_allowed")
    expect(allowOf(post)).toContain("GET")
    const get = await app.call("GET", contactsPath, { token: apiKey })
    expectError(get, 405, "method_not_allowed")
    expect(allowOf(get)).toEqual(["POST"])
  })
})

describe(`content negotiation and limits (${backend})`, () => {
  it("406 not_acceptable for Accept: text/html on balance", async () => {
    const res = await app.call("GET", balancePath, { token: apiKey, headers: { accept: "text/html" } })
    expectError(res, 406, "not_acceptable")
  })

  it.each(["application/json", "*/*", "application/json; charset=utf-8", "text/html, application/json;q=0.5"])(
    "200 for Accept: %s",
    async (accept) => {
      const res = await app.call("GET", balancePath, { token: apiKey, headers: { accept } })
      expect(res.status, res.text).toBe(200)
      expect(res.body.total).toBe(1)
    }
  )

  it("413 payload_too_large for a contact body over 64 KiB", async () => {
    const body = JSON.stringify({ phone_number: "+261340000001", address: "x".repeat(70 * 1024) })
    expect(body.length).toBeGreaterThan(64 * 1024)
    expectError(await app.call("POST", contactsPath, { token: apiKey, raw: body }), 413, "payload_too_large")
  })

  it("a contact body just under 64 KiB is accepted", async () => {
    const { apiKey: key } = await app.newOrg({ permissions: ["contacts.manage"] })
    const body = JSON.stringify({ phone_number: "+261340000001", address: "x".repeat(60 * 1024) })
    const res = await app.call("POST", contactsPath, { token: key, raw: body })
    expect(res.status, res.text.slice(0, 200)).toBe(201)
  })
})

describe(`health (${backend})`, () => {
  it("GET /health answers 200", async () => {
    const res = await app.call("GET", "/health")
    expect(res.status).toBe(200)
  })

  it("GET /ready answers 200 with the database up, naming the provider's routes", async () => {
    const res = await app.call("GET", "/ready")
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { status: "ready", routes: [{ route: "sim", connected: true, detail: "in-process simulator" }] }
    })
  })
})

describe(`OpenAPI document and docs (${backend})`, () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed JSON document
  let doc: any
  beforeAll(async () => {
    const res = await app.call("GET", "/api/sms/v2/openapi.json")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
    doc = res.body
  })

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
    for (const s of [...success, "400", "401", "403", "404", "415", "500", "503"]) expect(statuses, `${path} ${s}`).toContain(s)
  })

  it("is readable without a key", async () => {
    expect((await app.call("GET", "/api/sms/v2/openapi.json")).status).toBe(200)
  })

  it("GET /api/sms/v2/docs is an HTML page that needs no external script", async () => {
    const res = await app.call("GET", "/api/sms/v2/docs", { headers: { accept: "text/html" } })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type") ?? "").toMatch(/^text\/html/)
    expect(res.text).toMatch(/<html/i)
    expect(res.text).not.toContain('<script src="http')
    expect(res.text).not.toMatch(/<script[^>]*\ssrc\s*=\s*["']?(https?:)?\/\//i)
    expect(res.text).not.toMatch(/<link[^>]*\shref\s*=\s*["']?(https?:)?\/\//i)
  })
})

describe(`headers of every answer (${backend})`, () => {
  it("X-Content-Type-Options: nosniff on answers of every kind: API, operator, errors, health, docs, console, metrics", async () => {
    const { orgId } = await app.newOrg({ credits: 1 })
    const replies = [
      await app.call("GET", balancePath, { token: apiKey }),
      await app.call("POST", "/api/sms/v2/messages/", { token: apiKey, body: { to: "+261340000001", text: "x" }, headers: { "idempotency-key": `nosniff-${orgId}` } }),
      await app.call("GET", balancePath),
      await app.call("GET", "/api/sms/v2/nope/", { token: apiKey }),
      await app.call("DELETE", balancePath, { token: apiKey }),
      await app.call("GET", balancePath, { token: apiKey, headers: { accept: "text/html" } }),
      await app.call("POST", contactsPath, { token: apiKey, raw: "x".repeat(70 * 1024) }),
      await app.admin("GET", `/organizations/${orgId}`),
      await app.call("GET", "/health"),
      await app.call("GET", "/api/sms/v2/openapi.json"),
      await app.call("GET", "/api/sms/v2/docs", { headers: { accept: "text/html" } }),
      await app.call("GET", "/console", { headers: { accept: "text/html" } }),
      await app.call("GET", "/metrics")
    ]
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200, 201, 401, 404, 405, 406, 413]))
    for (const reply of replies) expect(reply.headers.get("x-content-type-options"), `${reply.status} ${reply.text.slice(0, 80)}`).toBe("nosniff")
  })

  it("Cache-Control: no-store on the answer that holds a new API key, and not on others", async () => {
    const { orgId } = await app.newOrg({ credits: 1 })
    const issued = await app.admin("POST", `/organizations/${orgId}/api-keys`, { permissions: ["balance.read"] })
    expect(issued.status, issued.text).toBe(201)
    expect(issued.body.api_key).toMatch(/^svc_sms_/)
    expect(issued.headers.get("cache-control")).toBe("no-store")
    const listed = await app.admin("GET", `/organizations/${orgId}/api-keys`)
    expect(listed.status).toBe(200)
    expect(listed.headers.get("cache-control")).toBeNull()
    expect((await app.call("GET", balancePath, { token: apiKey })).headers.get("cache-control")).toBeNull()
  })
})
