/**
 * The storage series of /metrics: rows and bytes per table (from the catalog) and the retention
 * backlog, on the test clock with a one-day retention. The clock is moved without running work
 * to make a message overdue, then advanced so that retention erases it.
 */
import { randomUUID } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { adminToken, backend, makeTestApp } from "../support/TestApp.ts"
import { parseSamples, valueOf } from "./prometheus.ts"

const app = makeTestApp({ label: "storage_metrics", config: { clock: "test", metricsRecountIntervalMs: 0, retentionDays: 1 } })
afterAll(() => app.dispose())

const scrape = async () => {
  const res = await app.call("GET", "/metrics", { token: adminToken })
  expect(res.status, res.text).toBe(200)
  return { text: res.text, samples: parseSamples(res.text) }
}

describe(`storage metrics (${backend})`, () => {
  it("exports rows and bytes of every table, and the retention backlog as it fills and empties", async () => {
    const { apiKey } = await app.newOrg({ credits: 10 })
    const created = await app.call("POST", "/api/sms/v2/messages/", {
      token: apiKey,
      body: { to: "+261340000001", text: "counted" },
      headers: { "idempotency-key": randomUUID() }
    })
    expect(created.status, created.text).toBe(201)
    await app.advance(app.config.simulatorReceiptDelayMs + 1_000)

    const first = await scrape()
    expect(first.text).toContain("# TYPE sms_table_bytes gauge")
    expect(first.text).toContain("# TYPE sms_table_rows gauge")
    expect(first.text).toContain("# TYPE sms_retention_backlog_messages gauge")
    for (const table of ["messages", "message_events", "credit_entries", "idempotency_keys"]) {
      expect(valueOf(first.samples, "sms_table_bytes", { table }), table).toBeGreaterThan(0)
      expect(first.samples.some((s) => s.name === "sms_table_rows" && s.labels.table === table), table).toBe(true)
    }
    expect(valueOf(first.samples, "sms_retention_backlog_messages")).toBe(0)

    await app.moveClock(86_400_000 + 60_000)
    expect(valueOf((await scrape()).samples, "sms_retention_backlog_messages")).toBe(1)
    await app.advance(1_000)
    expect(valueOf((await scrape()).samples, "sms_retention_backlog_messages")).toBe(0)
  })
})
