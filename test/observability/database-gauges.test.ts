/**
 * The gauges /metrics reads from the database, on a database of their own (a scratch database on
 * PostgreSQL), under a TestClock and a metric registry of their own: the in-flight statuses are
 * exact at every scrape, the final ones are recounted at most once per recount interval.
 */
import { expect, layer } from "@effect/vitest"
import { OptOutStore } from "../../src/consent/OptOutStore.ts"
import { Effect, Layer, Metric } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { DatabaseGauges } from "../../src/admin/DatabaseGauges.ts"
import { ReceiptStore } from "../../src/receipts/ReceiptStore.ts"
import { WebhookStore } from "../../src/webhooks/WebhookStore.ts"
import { LedgerStore } from "../../src/ledger/LedgerStore.ts"
import { TableSizes } from "../../src/db/TableSizes.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { databaseUp, messagesByStatus } from "../../src/observability/Metrics.ts"
import { scratchDatabaseLayer } from "../support/ScratchDatabase.ts"
import { testConfig } from "../support/TestApp.ts"

const recountIntervalMs = 60_000

const insertMessage = (organisationId: string, status: string) =>
  Effect.flatMap(
    Effect.service(SqlClient.SqlClient),
    (sql) =>
      sql`INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments, status, created_at, updated_at)
      VALUES (${organisationId}, ${randomUUID()}, '+261341234567', 'DEMO', 'Salama', 1, ${status}, now(), now())`
  )

const gauge = (g: Metric.Gauge<number>) => Effect.map(Metric.value(g), (s) => s.value)

layer(scratchDatabaseLayer("gauges", testConfig({ metricsRecountIntervalMs: recountIntervalMs })), {
  timeout: 120_000
})("DatabaseGauges", (it) => {
  it.effect("counts in-flight statuses at every refresh and final ones once per recount interval", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const gauges = yield* DatabaseGauges
      const organisationId = randomUUID()
      yield* sql`INSERT INTO organisations (id, name, sms_enabled, default_sender_name, created_at)
          VALUES (${organisationId}, 'Gauges test org', true, 'DEMO', now())`
      yield* insertMessage(organisationId, "delivered")

      yield* gauges.refresh
      expect(yield* gauge(messagesByStatus.delivered)).toBe(1)
      expect(yield* gauge(messagesByStatus.scheduled)).toBe(0)
      expect(yield* gauge(databaseUp)).toBe(1)

      yield* insertMessage(organisationId, "delivered")
      yield* insertMessage(organisationId, "scheduled")
      yield* TestClock.adjust(recountIntervalMs - 1)
      yield* gauges.refresh
      expect(yield* gauge(messagesByStatus.scheduled)).toBe(1)
      expect(yield* gauge(messagesByStatus.delivered)).toBe(1)

      yield* TestClock.adjust(1)
      yield* gauges.refresh
      expect(yield* gauge(messagesByStatus.delivered)).toBe(2)
    }).pipe(
      Effect.provide(
        DatabaseGauges.layer.pipe(
          Layer.provide([
            MessageStore.layer,
            LedgerStore.layer,
            ReceiptStore.layer,
            TableSizes.layer,
            OptOutStore.layer,
            WebhookStore.layer
          ])
        )
      ),
      Effect.provideService(Metric.MetricRegistry, new Map())
    )
  )
})
