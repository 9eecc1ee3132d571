/**
 * The gauges read from the database when /metrics is scraped. They are database-wide, so every
 * replica reports the same values (aggregate them with max, not sum).
 *
 * Cost: the in-flight statuses (scheduled, processing, accepted, unknown), the due backlog, the
 * unmatched receipts and the reserved credits are three statements over partial indexes and the small credit_lots table,
 * proportional to the work in flight, not to the history; rows and bytes per table come from the
 * catalog. Counting the final statuses reads every message (about 1 s per 3 million rows), and
 * the retention backlog every message past its retention, so they run at most once per
 * SMS_METRICS_RECOUNT_INTERVAL_MS, one recount at a time, in the background: a scrape waits for
 * it within its budget and otherwise reports the previous counts.
 */
import { Clock, Context, Duration, Effect, Fiber, FiberSet, Layer, Metric } from "effect"
import { AppConfig } from "../config/Config.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { TableSizes } from "../db/TableSizes.ts"
import { ReceiptStore } from "../receipts/ReceiptStore.ts"
import { finalStatuses } from "../domain/MessageStatus.ts"
import { LedgerStore } from "../ledger/LedgerStore.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import {
  databaseUp,
  dueBacklog,
  dueBacklogOldestAge,
  messagesByStatus,
  receiptsUnmatched,
  reservedCredits,
  retentionBacklog,
  tableGauges,
  optOutsBySource,
  webhookBacklogOldestAge
} from "../observability/Metrics.ts"
import { OptOutStore } from "../consent/OptOutStore.ts"
import { WebhookStore } from "../webhooks/WebhookStore.ts"

/** Longest a scrape waits for the database before reporting `sms_database_up 0`. */
export const scrapeBudgetMs = 5000

export class DatabaseGauges extends Context.Service<
  DatabaseGauges,
  {
    /** Sets every database gauge from the database, within the scrape budget; never fails (sets `sms_database_up`). */
    readonly refresh: Effect.Effect<void>
  }
>()("sms/DatabaseGauges") {
  static readonly layer = Layer.effect(
    DatabaseGauges,
    Effect.gen(function* () {
      const messages = yield* MessageStore
      const ledger = yield* LedgerStore
      const receipts = yield* ReceiptStore
      const tables = yield* TableSizes
      const { metricsRecountIntervalMs, retentionDays } = yield* AppConfig
      const webhooks = yield* WebhookStore
      const optOutStore = yield* OptOutStore
      const recounts = yield* FiberSet.make<void>()
      const runRecount = yield* FiberSet.runtime(recounts)<never>()

      const readInFlight = (nowMs: number) =>
        Effect.gen(function* () {
          const counts = yield* messages.inFlightCounts(new Date(nowMs))
          yield* Effect.all(
            [
              Metric.update(messagesByStatus.scheduled, counts.scheduled),
              Metric.update(messagesByStatus.processing, counts.processing),
              Metric.update(messagesByStatus.accepted, counts.accepted),
              Metric.update(messagesByStatus.unknown, counts.unknown),
              Metric.update(dueBacklog, counts.due),
              Metric.update(dueBacklogOldestAge, counts.oldestDueAgeSeconds),
              Metric.update(reservedCredits, yield* ledger.reservedEverywhere),
              Metric.update(receiptsUnmatched, yield* receipts.unmatchedCount),
              Metric.update(webhookBacklogOldestAge, yield* webhooks.backlogOldestAgeSeconds(new Date(nowMs)))
            ],
            { discard: true }
          )
          for (const { table, rows, bytes } of yield* tables.all) {
            const gauges = tableGauges(table)
            yield* Metric.update(gauges.rows, rows)
            yield* Metric.update(gauges.bytes, bytes)
          }
        })

      const countFinal = (nowMs: number): Effect.Effect<void, DatabaseUnavailable> =>
        Effect.gen(function* () {
          const rows = yield* messages.finalCounts
          yield* Effect.forEach(
            finalStatuses,
            (status) => Metric.update(messagesByStatus[status], rows.find((r) => r.status === status)?.n ?? 0),
            { discard: true }
          )
          yield* Metric.update(retentionBacklog, yield* messages.expiredCount(retentionDays, new Date(nowMs)))
          const optOuts = yield* optOutStore.countBySource
          yield* Effect.forEach(
            ["sms", "api", "operator"] as const,
            (source) => Metric.update(optOutsBySource[source], optOuts.find((r) => r.source === source)?.n ?? 0),
            { discard: true }
          )
        })

      let recountedAt: number | undefined
      let recount: Fiber.Fiber<void> | undefined

      // starts a recount when the last one is too old (one at a time) and returns the one running, if any
      const startRecount = (nowMs: number) =>
        Effect.sync(() => {
          if (recount === undefined && (recountedAt === undefined || nowMs - recountedAt >= metricsRecountIntervalMs)) {
            const fiber = runRecount(
              countFinal(nowMs).pipe(
                Effect.tap(() => Effect.sync(() => (recountedAt = nowMs))),
                Effect.catchCause((cause) => Effect.logWarning("metrics: counting final statuses failed", cause)),
                Effect.ensuring(Effect.sync(() => (recount = undefined)))
              )
            )
            // a recount that already finished synchronously has cleared itself
            if (fiber.pollUnsafe() === undefined) recount = fiber
          }
          return recount
        })

      const refresh = Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const running = yield* startRecount(nowMs)
        yield* readInFlight(nowMs)
        // waiting does not interrupt the recount: a slow one finishes for a later scrape
        if (running !== undefined) yield* Fiber.await(running)
      }).pipe(
        Effect.timeout(Duration.millis(scrapeBudgetMs)),
        Effect.matchCauseEffect({
          onSuccess: () => Metric.update(databaseUp, 1),
          onFailure: (cause) =>
            Effect.logWarning("metrics: the database gauges could not be read", cause).pipe(
              Effect.andThen(Metric.update(databaseUp, 0))
            )
        })
      )

      return DatabaseGauges.of({ refresh: Effect.withSpan(refresh, "DatabaseGauges.refresh") })
    })
  )
}
