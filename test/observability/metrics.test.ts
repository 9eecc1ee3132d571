/**
 * GET /metrics through the in-process app on the test clock, on a database of its own (a scratch
 * database on PostgreSQL), the clock moved without running any work so messages stay where their
 * admission left them: the operator token is required, every series is exported with its help and type, and
 * each one moves as messages are admitted, sent, refused, scheduled and fall due.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { testNumbers } from "../../src/provider/simulator/Simulator.ts"
import { countReceiptsApplied } from "../../src/observability/Metrics.ts"
import { prometheusContentType } from "../../src/admin/MetricsRoute.ts"
import { expectPlainError } from "../http/helpers.ts"
import { adminToken, makeTestApp } from "../support/TestApp.ts"
import { parseSamples, type Sample, valueOf } from "./prometheus.ts"

const app = makeTestApp({ label: "metrics", config: { clock: "test", metricsRecountIntervalMs: 0 } })
afterAll(() => app.dispose())

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

const scrapeText = async () => {
  const res = await app.call("GET", "/metrics", { token: adminToken, headers: { accept: prometheusAccept } })
  expect(res.status, res.text).toBe(200)
  expect(res.headers.get("content-type")).toBe(prometheusContentType)
  return res.text
}

const scrape = async (): Promise<ReadonlyArray<Sample>> => parseSamples(await scrapeText())

const admissions = (samples: ReadonlyArray<Sample>, route: string, status: number, replayed = false) =>
  valueOf(samples, "sms_admissions_total", { route, status: String(status), replayed: String(replayed) })

const submits = (samples: ReadonlyArray<Sample>, result: string) =>
  valueOf(samples, "sms_provider_submit_duration_seconds_count", { result })

const messages = (samples: ReadonlyArray<Sample>, status: string) => valueOf(samples, "sms_messages", { status })

const post = (apiKey: string, path: string, body: unknown, key: string = randomUUID()) =>
  app.call("POST", `/api/sms/v2/${path}/`, { token: apiKey, body, headers: { "idempotency-key": key } })

describe("GET /metrics", () => {
  it("refuses a scrape without the operator token (401 invalid_api_key)", async () => {
    expectPlainError(await app.call("GET", "/metrics"), 401, "invalid_api_key")
    expectPlainError(await app.call("GET", "/metrics", { token: "not-the-operator-token" }), 401, "invalid_api_key")
    const { apiKey } = await app.newOrg()
    expectPlainError(await app.call("GET", "/metrics", { token: apiKey }), 401, "invalid_api_key")
  })

  it("answers its text whatever the Accept: text/plain alone, or a client that asks for HTML", async () => {
    for (const accept of ["text/plain", "text/html"]) {
      const res = await app.call("GET", "/metrics", { token: adminToken, headers: { accept } })
      expect(res.status, res.text).toBe(200)
      expect(res.headers.get("content-type")).toBe(prometheusContentType)
    }
  })

  it("answers 405 to another method", async () => {
    const res = await app.call("POST", "/metrics", { token: adminToken, body: {} })
    expectPlainError(res, 405, "method_not_allowed")
    expect(res.headers.get("allow")).toBe("GET")
  })

  it("exports every series with its help and type from the first scrape", async () => {
    const text = await scrapeText()
    for (const [name, type] of families) {
      expect(text).toMatch(new RegExp(`^# HELP ${name} \\S.+$`, "m"))
      expect(text).toContain(`\n# TYPE ${name} ${type}\n`)
    }
    const samples = parseSamples(text)
    for (const status of ["scheduled", "processing", "accepted", "delivered", "undeliverable", "blocked", "failed", "unknown"]) {
      expect(samples.some((s) => s.name === "sms_messages" && s.labels.status === status), status).toBe(true)
    }
    for (const result of ["accepted", "rejected", "unknown", "unreachable"]) {
      expect(samples.some((s) => s.name === "sms_provider_submit_duration_seconds_bucket" && s.labels.result === result && s.labels.le === "30"))
        .toBe(true)
    }
    for (const result of ["accepted", "not_received", "unknown"]) {
      expect(samples.some((s) => s.name === "sms_provider_queries_total" && s.labels.result === result), result).toBe(true)
    }
    for (const outcome of ["delivered", "undeliverable", "ignored"]) {
      expect(samples.some((s) => s.name === "sms_receipts_applied_total" && s.labels.outcome === outcome), outcome).toBe(true)
    }
    expect(valueOf(samples, "sms_database_up")).toBe(1)
  })

  it("moves as messages are admitted, sent, refused, scheduled and fall due", async () => {
    const { apiKey } = await app.newOrg({ credits: 100 })
    const before = await scrape()
    const inOneMinute = new Date((await app.now()) + 60_000).toISOString()

    expect((await post(apiKey, "messages", { to: testNumbers.acceptedNoReceipt, text: "Salama" })).status).toBe(201)
    expect((await post(apiKey, "messages", { to: testNumbers.rejected, text: "Salama" })).status).toBe(502)
    expect((await post(apiKey, "messages", { to: testNumbers.unknownForGood, text: "Salama" })).status).toBe(502)
    const scheduled = { to: "+261341234567", text: "Salama", send_at: inOneMinute }
    const key = randomUUID()
    expect((await post(apiKey, "messages", scheduled, key)).status).toBe(202)
    const replay = await post(apiKey, "messages", scheduled, key)
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([202, "true"])
    expect((await post(apiKey, "messages", { to: "0341234567", text: "Salama" })).status).toBe(400)
    expect((await post(apiKey, "messages", { to: "+261341234567", text: "x".repeat(70_000) })).status).toBe(413)
    const batch = { recipients: ["+261341234568", "+261341234569"], text: "Salama", send_at: inOneMinute }
    expect((await post(apiKey, "message-batches", batch)).status).toBe(202)

    const after = await scrape()
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
    expect(delta((s) => valueOf(s, "sms_provider_submit_duration_seconds_bucket", { result: "accepted", le: "1" }))).toBe(1)

    expect(delta((s) => messages(s, "accepted"))).toBe(1)
    expect(delta((s) => messages(s, "failed"))).toBe(1)
    expect(delta((s) => messages(s, "unknown"))).toBe(1)
    expect(delta((s) => messages(s, "scheduled"))).toBe(3)
    // the unknown one stays reserved, the scheduled ones are reserved; accepted consumed, refused released
    expect(delta((s) => valueOf(s, "sms_reserved_credits"))).toBe(4)

    // nothing is due yet; 150 s later the three scheduled messages have been due for 90 s
    expect(valueOf(after, "sms_due_backlog_messages")).toBe(0)
    expect(valueOf(after, "sms_due_backlog_oldest_age_seconds")).toBe(0)
    await app.moveClock(150_000)
    const due = await scrape()
    expect(valueOf(due, "sms_due_backlog_messages")).toBe(3)
    expect(valueOf(due, "sms_due_backlog_oldest_age_seconds")).toBe(90)
  })

  it("exports the receipts the applier counts", async () => {
    const before = await scrape()
    await Effect.runPromise(countReceiptsApplied({ delivered: 0, undeliverable: 2, ignored: 1 }))
    const after = await scrape()
    const receipts = (s: ReadonlyArray<Sample>, outcome: string) => valueOf(s, "sms_receipts_applied_total", { outcome })
    expect(receipts(after, "undeliverable") - receipts(before, "undeliverable")).toBe(2)
    expect(receipts(after, "ignored") - receipts(before, "ignored")).toBe(1)
    expect(receipts(after, "delivered") - receipts(before, "delivered")).toBe(0)
  })
})
