// The served OpenAPI document is one a generator can trust: Redocly's recommended rules pass
// (but the spec's own trailing slashes, see redocly.yaml), required headers are required, the
// security scheme is `bearer`, response headers and retry rules are written down.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, withApp } from "../support/TestApp.ts"

const root = resolve(import.meta.dirname, "../..")
const temp = mkdtempSync(join(tmpdir(), "sms-openapi-"))
afterAll(async () => {
  rmSync(temp, { recursive: true, force: true })
})

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON document, asserted field by field
let doc: any
let docsPage: string
const readDocs = Effect.gen(function* () {
  const app = yield* App
  const served = yield* app.call("GET", "/api/sms/v2/openapi.json")
  expect(served.status).toBe(200)
  doc = served.body
  docsPage = (yield* app.call("GET", "/api/sms/v2/docs", { headers: { accept: "text/html" } })).text
})

interface LintProblem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer: string }>
}

// the documents are read once the app is up; the tests read them, not the app
withApp(
  {},
  readDocs
)((it) => {
  describe("redocly lint", () => {
    it("finds no error in the served document (trailing-slash paths allowed by redocly.yaml, nothing else)", () => {
      const file = join(temp, "openapi.json")
      writeFileSync(file, JSON.stringify(doc, null, 2))
      const run = spawnSync(
        process.execPath,
        [
          join(root, "node_modules/@redocly/cli/bin/cli.js"),
          "lint",
          "--config",
          join(root, "redocly.yaml"),
          "--format=json",
          file
        ],
        {
          cwd: temp,
          encoding: "utf8",
          timeout: 120_000,
          env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
        }
      )
      const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: ReadonlyArray<LintProblem> }
      const errors = report.problems
        .filter((p) => p.severity === "error")
        .map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
      expect(errors).toEqual([])
      expect(report.totals.errors).toBe(0)
    })

    it("is configured to waive exactly one rule, the spec's trailing slashes", async () => {
      const config = (await import("node:fs")).readFileSync(join(root, "redocly.yaml"), "utf8")
      expect(config.match(/^ {2}[a-z-]+: off$/gm)).toEqual(["  no-path-trailing-slash: off"])
      expect(Object.keys(doc.paths).every((p) => p.endsWith("/"))).toBe(true)
    })
  })

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      // biome-ignore lint/suspicious/noExplicitAny: operations of the parsed document
      Object.entries(item as Record<string, any>).map(([method, op]) => ({ path, method, op }))
    )

  describe("what a generated client needs", () => {
    it("declares the security scheme as HTTP bearer, lowercase, on every operation", () => {
      expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" })
      for (const { op } of operations()) expect(op.security).toEqual([{ apiKey: [] }])
    })

    it("names a server, relative to the document", () => {
      expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }])
    })

    it.each(["/api/sms/v2/messages/", "/api/sms/v2/message-batches/"])(
      "POST %s requires Idempotency-Key, with its pattern",
      (path) => {
        const header = doc.paths[path].post.parameters.find((p: { name: string }) => p.name === "idempotency-key")
        expect(header).toMatchObject({
          in: "header",
          required: true,
          schema: { type: "string", pattern: "^[!-~]{1,128}$" }
        })
      }
    )

    it("every response declares X-Request-Id and X-Content-Type-Options; 503 Retry-After; 405 Allow", () => {
      for (const { path, method, op } of operations()) {
        for (const [status, response] of Object.entries(
          op.responses as Record<string, { headers?: Record<string, unknown> }>
        )) {
          const where = `${method} ${path} ${status}`
          expect(response.headers?.["x-request-id"], where).toMatchObject({ required: true })
          expect(response.headers?.["x-content-type-options"], where).toMatchObject({
            required: true,
            schema: { enum: ["nosniff"] }
          })
          if (status === "503") expect(response.headers?.["retry-after"], where).toBeDefined()
          if (status === "405") expect(response.headers?.allow, where).toBeDefined()
        }
      }
    })

    it("creations declare Location on their successes and Idempotent-Replayed on every answer they replay", () => {
      const messages = doc.paths["/api/sms/v2/messages/"].post.responses
      for (const status of ["201", "202"]) expect(messages[status].headers.location).toMatchObject({ required: true })
      for (const status of ["201", "202", "403", "502", "503"])
        expect(messages[status].headers["idempotent-replayed"], status).toBeDefined()
      expect(messages["410"].headers["idempotent-replayed"]).toBeUndefined()
      const batches = doc.paths["/api/sms/v2/message-batches/"].post.responses
      expect(batches["202"].headers).toMatchObject({
        location: { required: true },
        "idempotent-replayed": expect.anything()
      })
      expect(doc.paths["/api/sms/v2/balance/"].get.responses["200"].headers["idempotent-replayed"]).toBeUndefined()
    })

    it("describes every operation, with how to retry it", () => {
      for (const { path, method, op } of operations()) {
        expect(op.description, `${method} ${path}`).toMatch(/retry|repeatable|send the same body again/i)
      }
      const create = doc.paths["/api/sms/v2/messages/"].post.description as string
      for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9]) expect(create).toContain(`+26134000000${n}`)
      expect(create).toMatch(/never resend with\s+a new key/i)
      expect(create).toContain("Idempotent-Replayed: true")
    })

    it("says what delivery_time is: the receipt's time of the final outcome, null otherwise", () => {
      expect(doc.components.schemas.Message.properties.delivery_time.description).toBe(
        "The time the receipt reported the final delivery outcome (delivered or undeliverable); null for every other status"
      )
    })

    it("the document and the docs page state the rules with no link or path outside the service", () => {
      const text = JSON.stringify(doc)
      expect(text).not.toMatch(/https?:\/\/|\.\.\/|shared\/|CONTRACT|sms-service-v2\.md/)
      expect(doc.info.description).toMatch(/Never resend with a new key/)
      expect(docsPage).toContain("Never resend with a new key")
      expect(docsPage).toContain("+261340000009")
    })
  })
})
