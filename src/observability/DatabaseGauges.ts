/**
 * The gauges read from the database when /metrics is scraped. They are database-wide, so every
 * replica reports the same values (aggregate them with max, not sum).
 *
 * Cost: the in-flight statuses (scheduled, processing, accepted, unknown), the due backlog and
 * the reserved credits are one round trip over partial indexes and the small credit_lots table,
 * proportional to the work in flight, not to the history. Counting the final statuses reads every
 * message (about 1 s per 3 million rows), so it runs at most once per
 * SMS_METRICS_RECOUNT_INTERVAL_MS, one recount at a time, in the background: a scrape waits for
 * it within its budget and otherwise reports the previous counts.
 */
import { Clock, Context, Duration, Effect, Fiber, FiberSet, Layer, Metric } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { AppConfig } from "../Config.ts"
import { finalStatuses } from "../domain/MessageStatus.ts"
import { databaseUp, dueBacklog, dueBacklogOldestAge, messagesByStatus, reservedCredits } from "./Metrics.ts"

/** Longest a scrape waits for the database before reporting `sms_database_up 0`. */
export const scrapeBudgetMs = 5000

interface InFlight {
  readonly scheduled: number
  readonly processing: number
  readonly accepted: number
  readonly unknown: number
  readonly due: number
  readonly oldestDueAgeSeconds: number
  readonly reserved: number
}

export class DatabaseGauges extends Context.Service<DatabaseGauges, {
  /** Sets every database gauge from the database, within the scrape budget; never fails (sets `sms_database_up`). */
  readonly refresh: Effect.Effect<void>
}>()("sms/DatabaseGauges") {
  static readonly layer = Layer.effect(DatabaseGauges, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { metricsRecountIntervalMs } = yield* AppConfig
    const recounts = yield* FiberSet.make<void>()
    const runRecount = yield* FiberSet.runtime(recounts)<never>()

    // count(*) is bigint: read as float8 so the driver hands numbers back
    const readInFlight = (nowMs: number) =>
      sql<InFlight>`SELECT
          (SELECT count(*) FROM messages WHERE status = 'scheduled')::float8 AS scheduled,
          (SELECT count(*) FROM messages WHERE status = 'processing')::float8 AS processing,
          (SELECT count(*) FROM messages WHERE status = 'accepted')::float8 AS accepted,
          (SELECT count(*) FROM messages WHERE status = 'unknown')::float8 AS unknown,
          due.n::float8 AS due,
          coalesce(extract(epoch FROM ${new Date(nowMs)}::timestamptz - due.oldest), 0)::float8 AS oldest_due_age_seconds,
          (SELECT coalesce(sum(reserved), 0) FROM credit_lots)::float8 AS reserved
        FROM (SELECT count(*) AS n, min(due_at) AS oldest FROM messages
          WHERE status = 'scheduled' AND due_at <= ${new Date(nowMs)}) due`.pipe(
        Effect.flatMap(([row]) =>
          Effect.all([
            Metric.update(messagesByStatus.scheduled, row!.scheduled),
            Metric.update(messagesByStatus.processing, row!.processing),
            Metric.update(messagesByStatus.accepted, row!.accepted),
            Metric.update(messagesByStatus.unknown, row!.unknown),
            Metric.update(dueBacklog, row!.due),
            Metric.update(dueBacklogOldestAge, Math.max(0, row!.oldestDueAgeSeconds)),
            Metric.update(reservedCredits, row!.reserved)
          ], { discard: true }))
      )

    const countFinal: Effect.Effect<void, SqlError.SqlError> = sql<{ status: string; n: number }>`SELECT status, count(*)::float8 AS n
        FROM messages WHERE status IN ${sql.in(finalStatuses)} GROUP BY status`.pipe(
      Effect.flatMap((rows) =>
        Effect.forEach(finalStatuses, (status) =>
          Metric.update(messagesByStatus[status], rows.find((r) => r.status === status)?.n ?? 0), { discard: true }))
    )

    let recountedAt: number | undefined = undefined
    let recount: Fiber.Fiber<void> | undefined = undefined

    // starts a recount when the last one is too old (one at a time) and returns the one running, if any
    const startRecount = (nowMs: number) =>
      Effect.sync(() => {
        if (recount === undefined && (recountedAt === undefined || nowMs - recountedAt >= metricsRecountIntervalMs)) {
          const fiber = runRecount(countFinal.pipe(
            Effect.tap(() => Effect.sync(() => (recountedAt = nowMs))),
            Effect.catchCause((cause) => Effect.logWarning("metrics: counting final statuses failed", cause)),
            Effect.ensuring(Effect.sync(() => (recount = undefined)))
          ))
          // a recount that already finished synchronously has cleared itself
          if (fiber.pollUnsafe() === undefined) recount = fiber
        }
        return recount
      })

    const refresh = Effect.gen(function*() {
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
  }))
}
