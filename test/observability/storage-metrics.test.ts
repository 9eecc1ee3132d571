/**
 * The storage series of /metrics: rows and bytes per table (from the catalog) and the retention
 * backlog, on the test clock with a one-day retention. The clock is moved without running work
 * to make a message overdue, then advanced so that retention erases it.
 */
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { adminToken, App, backend, withApp } from "../support/TestApp.ts"
import { parseSamples, sampleValue } from "./prometheus.ts"

const scrape = () =>
  Effect.gen(function* () {
    const app = yield* App
    const res = yield* app.call("GET", "/metrics", { token: adminToken })
    expect(res.status, res.text).toBe(200)
    return { text: res.text, samples: parseSamples(res.text) }
  })

withApp({ label: "storage_metrics", config: { clock: "test", metricsRecountIntervalMs: 0, retentionDays: 1 } })(
  `storage metrics (${backend})`,
  (it) => {
    it.effect("exports rows and bytes of every table, and the retention backlog as it fills and empties", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const created = yield* app.call("POST", "/api/sms/v2/messages/", {
          token: apiKey,
          body: { to: "+261340000001", text: "counted" },
          headers: { "idempotency-key": randomUUID() }
        })
        expect(created.status, created.text).toBe(201)
        yield* app.advance(app.config.simulatorReceiptDelayMs + 1_000)

        const first = yield* scrape()
        expect(first.text).toContain("# TYPE sms_table_bytes gauge")
        expect(first.text).toContain("# TYPE sms_table_rows gauge")
        expect(first.text).toContain("# TYPE sms_retention_backlog_messages gauge")
        for (const table of ["messages", "message_events", "credit_entries", "idempotency_keys"]) {
          expect(sampleValue(first.samples, "sms_table_bytes", { table }), table).toBeGreaterThan(0)
          expect(
            first.samples.some((s) => s.name === "sms_table_rows" && s.labels.table === table),
            table
          ).toBe(true)
        }
        expect(sampleValue(first.samples, "sms_retention_backlog_messages")).toBe(0)

        yield* app.moveClock(86_400_000 + 60_000)
        expect(sampleValue((yield* scrape()).samples, "sms_retention_backlog_messages")).toBe(1)
        yield* app.advance(1_000)
        expect(sampleValue((yield* scrape()).samples, "sms_retention_backlog_messages")).toBe(0)
      })
    )
  }
)
