/**
 * GET /metrics through the in-process app on the test clock, on a database of its own (a scratch
 * database on PostgreSQL), the clock moved without running any work so messages stay where their
 * admission left them: the operator token is required, every series is exported with its help and type, and
 * each one moves as messages are admitted, sent, refused, scheduled and fall due.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { expect } from "@effect/vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { countReceiptsApplied } from "../../src/observability/Metrics.ts"
import { prometheusContentType } from "../../src/admin/MetricsRoute.ts"
import { expectPlainError } from "../http/helpers.ts"
import { adminToken, App, withApp } from "../support/TestApp.ts"
import { parseSamples, type Sample, sampleValue } from "./prometheus.ts"

const families: ReadonlyArray<readonly [name: string, type: string]> = [
  ["sms_admissions_total", "counter"],
  ["sms_provider_submit_duration_seconds", "histogram"],
  ["sms_provider_queries_total", "counter"],
  ["sms_receipts_applied_total", "counter"],
  ["sms_messages", "gauge"],
  ["sms_due_backlog_messages", "gauge"],
  ["sms_due_backlog_oldest_age_seconds", "gauge"],
  ["sms_reserved_credits", "gauge"],
  ["sms_database_up", "gauge"]
]

/** What Prometheus 2.x and 3.x send: the edge must let it through to a text answer. */
const prometheusAccept =
  "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

const scrapeText = () =>
  Effect.gen(function* () {
    const app = yield* App
    const res = yield* app.call("GET", "/metrics", { token: adminToken, headers: { accept: prometheusAccept } })
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get("content-type")).toBe(prometheusContentType)
    return res.text
  })

const scrape = (): Effect.Effect<ReadonlyArray<Sample>, never, App> => Effect.map(scrapeText(), parseSamples)

const admissions = (samples: ReadonlyArray<Sample>, route: string, status: number, replayed = false) =>
  sampleValue(samples, "sms_admissions_total", { route, status: String(status), replayed: String(replayed) })

const submits = (samples: ReadonlyArray<Sample>, result: string) =>
  sampleValue(samples, "sms_provider_submit_duration_seconds_count", { result })

const messages = (samples: ReadonlyArray<Sample>, status: string) => sampleValue(samples, "sms_messages", { status })

const post = (apiKey: string, path: string, body: unknown, key: string = randomUUID()) =>
  Effect.flatMap(App, (app) =>
    app.call("POST", `/api/sms/v2/${path}/`, { token: apiKey, body, headers: { "idempotency-key": key } })
  )

withApp({ label: "metrics", config: { clock: "test", metricsRecountIntervalMs: 0 } })("GET /metrics", (it) => {
  it.effect("refuses a scrape without the operator token (401 invalid_api_key)", () =>
    Effect.gen(function* () {
      const app = yield* App
      expectPlainError(yield* app.call("GET", "/metrics"), 401, "invalid_api_key")
      expectPlainError(yield* app.call("GET", "/metrics", { token: "not-the-operator-token" }), 401, "invalid_api_key")
      const { apiKey } = yield* app.newOrg()
      expectPlainError(yield* app.call("GET", "/metrics", { token: apiKey }), 401, "invalid_api_key")
    })
  )

  it.effect("answers its text whatever the Accept: text/plain alone, or a client that asks for HTML", () =>
    Effect.gen(function* () {
      const app = yield* App
      for (const accept of ["text/plain", "text/html"]) {
        const res = yield* app.call("GET", "/metrics", { token: adminToken, headers: { accept } })
        expect(res.status, res.text).toBe(200)
        expect(res.headers.get("content-type")).toBe(prometheusContentType)
      }
    })
  )

  it.effect("answers 405 to another method", () =>
    Effect.gen(function* () {
      const app = yield* App
      const res = yield* app.call("POST", "/metrics", { token: adminToken, body: {} })
      expectPlainError(res, 405, "method_not_allowed")
      expect(res.headers.get("allow")).toBe("GET")
    })
  )

  it.effect("exports every series with its help and type from the first scrape", () =>
    Effect.gen(function* () {
      const text = yield* scrapeText()
      for (const [name, type] of families) {
        expect(text).toMatch(new RegExp(`^# HELP ${name} \\S.+$`, "m"))
        expect(text).toContain(`\n# TYPE ${name} ${type}\n`)
      }
      const samples = parseSamples(text)
      for (const status of [
        "scheduled",
        "processing",
        "accepted",
        "delivered",
        "undeliverable",
        "blocked",
        "failed",
        "unknown"
      ]) {
        expect(
          samples.some((s) => s.name === "sms_messages" && s.labels.status === status),
          status
        ).toBe(true)
      }
      for (const result of ["accepted", "rejected", "unknown", "unreachable"]) {
        expect(
          samples.some(
            (s) =>
              s.name === "sms_provider_submit_duration_seconds_bucket" &&
              s.labels.result === result &&
              s.labels.le === "30"
          )
        ).toBe(true)
      }
      for (const result of ["accepted", "not_received", "unknown"]) {
        expect(
          samples.some((s) => s.name === "sms_provider_queries_total" && s.labels.result === result),
          result
        ).toBe(true)
      }
      for (const outcome of ["delivered", "undeliverable", "ignored"]) {
        expect(
          samples.some((s) => s.name === "sms_receipts_applied_total" && s.labels.outcome === outcome),
          outcome
        ).toBe(true)
      }
      expect(sampleValue(samples, "sms_database_up")).toBe(1)
    })
  )

  it.effect("moves as messages are admitted, sent, refused, scheduled and fall due", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { apiKey } = yield* app.newOrg({ credits: 100 })
      const before = yield* scrape()
      const inOneMinute = new Date((yield* app.now) + 60_000).toISOString()

      expect((yield* post(apiKey, "messages", { to: testNumbers.acceptedNoReceipt, text: "Salama" })).status).toBe(201)
      expect((yield* post(apiKey, "messages", { to: testNumbers.rejected, text: "Salama" })).status).toBe(502)
      expect((yield* post(apiKey, "messages", { to: testNumbers.unknownForGood, text: "Salama" })).status).toBe(502)
      const scheduled = { to: "+261341234567", text: "Salama", send_at: inOneMinute }
      const key = randomUUID()
      expect((yield* post(apiKey, "messages", scheduled, key)).status).toBe(202)
      const replay = yield* post(apiKey, "messages", scheduled, key)
      expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([202, "true"])
      expect((yield* post(apiKey, "messages", { to: "0341234567", text: "Salama" })).status).toBe(400)
      expect((yield* post(apiKey, "messages", { to: "+261341234567", text: "x".repeat(70_000) })).status).toBe(413)
      const batch = { recipients: ["+261341234568", "+261341234569"], text: "Salama", send_at: inOneMinute }
      expect((yield* post(apiKey, "message-batches", batch)).status).toBe(202)

      const after = yield* scrape()
      const delta = (read: (s: ReadonlyArray<Sample>) => number) => read(after) - read(before)

      expect(delta((s) => admissions(s, "messages", 201))).toBe(1)
      expect(delta((s) => admissions(s, "messages", 502))).toBe(2)
      expect(delta((s) => admissions(s, "messages", 202))).toBe(1)
      expect(delta((s) => admissions(s, "messages", 202, true))).toBe(1)
      expect(delta((s) => admissions(s, "messages", 400))).toBe(1)
      expect(delta((s) => admissions(s, "messages", 413))).toBe(1)
      expect(delta((s) => admissions(s, "message-batches", 202))).toBe(1)

      // latency is real elapsed time (the test clock stands still): the in-process simulator answers well under a second
      expect(delta((s) => submits(s, "accepted"))).toBe(1)
      expect(delta((s) => submits(s, "rejected"))).toBe(1)
      expect(delta((s) => submits(s, "unknown"))).toBe(1)
      expect(
        delta((s) => sampleValue(s, "sms_provider_submit_duration_seconds_bucket", { result: "accepted", le: "1" }))
      ).toBe(1)

      expect(delta((s) => messages(s, "accepted"))).toBe(1)
      expect(delta((s) => messages(s, "failed"))).toBe(1)
      expect(delta((s) => messages(s, "unknown"))).toBe(1)
      expect(delta((s) => messages(s, "scheduled"))).toBe(3)
      // the unknown one stays reserved, the scheduled ones are reserved; accepted consumed, refused released
      expect(delta((s) => sampleValue(s, "sms_reserved_credits"))).toBe(4)

      // nothing is due yet; 150 s later the three scheduled messages have been due for 90 s
      expect(sampleValue(after, "sms_due_backlog_messages")).toBe(0)
      expect(sampleValue(after, "sms_due_backlog_oldest_age_seconds")).toBe(0)
      yield* app.moveClock(150_000)
      const due = yield* scrape()
      expect(sampleValue(due, "sms_due_backlog_messages")).toBe(3)
      expect(sampleValue(due, "sms_due_backlog_oldest_age_seconds")).toBe(90)
    })
  )

  it.effect("exports the receipts the applier counts", () =>
    Effect.gen(function* () {
      const before = yield* scrape()
      yield* countReceiptsApplied({ delivered: 0, undeliverable: 2, ignored: 1 })
      const after = yield* scrape()
      const receipts = (s: ReadonlyArray<Sample>, outcome: string) =>
        sampleValue(s, "sms_receipts_applied_total", { outcome })
      expect(receipts(after, "undeliverable") - receipts(before, "undeliverable")).toBe(2)
      expect(receipts(after, "ignored") - receipts(before, "ignored")).toBe(1)
      expect(receipts(after, "delivered") - receipts(before, "delivered")).toBe(0)
    })
  )
})
