/**
 * Every metric the service exports on /metrics, with its name, unit and help text. Each labelled
 * series is built once (here, or on the first sight of a new HTTP status), so recording on the hot
 * path is a lookup and an addition: no label set or string is built per request.
 */
import { Effect, Metric } from "effect"
import type { MessageStatus } from "../domain/MessageStatus.ts"
import { MessageStatuses } from "../domain/MessageStatus.ts"

// ---------------------------------------------------------------------------------------------
// Admissions: what the two creation routes answered.

/** The creation routes whose answers are counted, named like their API groups. */
export type AdmissionRoute = "messages" | "message-batches"

const admissionsName = "sms_admissions_total"
const admissionsHelp =
  "Answers of the creation routes, by route, HTTP status (5xx: a failure the edge turned into 500 or 503) and whether the answer was an idempotent replay"

/** The status label of a failure that escaped the handler: the edge answers it with 500 or 503. */
const escapedStatus = 0

const admissionSeries = new Map<number, Metric.Counter<number>>()

const admissionKey = (route: AdmissionRoute, status: number, replayed: boolean) =>
  (route === "messages" ? 0 : 2000) + status * 2 + (replayed ? 1 : 0)

const admissionCounter = (route: AdmissionRoute, status: number, replayed: boolean): Metric.Counter<number> => {
  const key = admissionKey(route, status, replayed)
  const found = admissionSeries.get(key)
  if (found !== undefined) return found
  // built once per (route, status, replayed) ever seen: a handful of series
  const made = Metric.counter(admissionsName, {
    description: admissionsHelp,
    incremental: true,
    attributes: { route, status: status === escapedStatus ? "5xx" : String(status), replayed: String(replayed) }
  })
  admissionSeries.set(key, made)
  return made
}

/** Counts one answer of a creation route: its HTTP status, and whether it replayed a stored answer. */
export const countAdmission = (route: AdmissionRoute, status: number, replayed: boolean): Effect.Effect<void> =>
  Metric.update(admissionCounter(route, status, replayed), 1)

/** Counts a creation request that failed outside the handler's answers (the edge answers 500 or 503). */
export const countEscapedAdmission = (route: AdmissionRoute): Effect.Effect<void> =>
  Metric.update(admissionCounter(route, escapedStatus, false), 1)

// ---------------------------------------------------------------------------------------------
// Provider calls.

/** Submit latency buckets, in seconds: 1 ms to 30 s, with the provider answer timeout (15 s) as a bound. */
export const submitLatencyBoundsSeconds = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 20, 30
] as const

// By the tag of the provider port's results (provider/Provider.ts SubmitResult, QueryResult); the
// provider's decorator (provider/Metered.ts) indexes these by tag, so a tag missing here fails its typecheck.
const submitLabels = {
  Accepted: "accepted",
  Rejected: "rejected",
  Unknown: "unknown",
  Unreachable: "unreachable"
} as const
type SubmitTag = keyof typeof submitLabels

const queryLabels = {
  Accepted: "accepted",
  NotReceived: "not_received",
  Unknown: "unknown"
} as const
type QueryTag = keyof typeof queryLabels

const byLabel = <K extends string, M>(
  labels: Readonly<Record<K, string>>,
  make: (label: string) => M
): Readonly<Record<K, M>> =>
  Object.fromEntries(Object.entries<string>(labels).map(([tag, label]) => [tag, make(label)])) as Record<K, M>

const submitBoundaries = Metric.boundariesFromIterable(submitLatencyBoundsSeconds)

/** `sms_provider_submit_duration_seconds`, one series per SubmitResult tag. */
export const submitDuration: Readonly<Record<SubmitTag, Metric.Histogram<number>>> = byLabel(submitLabels, (result) =>
  Metric.histogram("sms_provider_submit_duration_seconds", {
    description: "Time the provider took to answer a submission, in seconds, by result",
    boundaries: submitBoundaries,
    attributes: { result }
  })
)

/** `sms_provider_queries_total`, one series per QueryResult tag. */
export const providerQueries: Readonly<Record<QueryTag, Metric.Counter<number>>> = byLabel(queryLabels, (result) =>
  Metric.counter("sms_provider_queries_total", {
    description:
      "Verification queries answered by the provider about messages whose submission result was unknown, by result",
    incremental: true,
    attributes: { result }
  })
)

// ---------------------------------------------------------------------------------------------
// Receipts.

/** What applying a delivery receipt did: moved its message to delivered or undeliverable, or nothing (already final). */
export type ReceiptOutcome = "delivered" | "undeliverable" | "ignored"

const receiptsApplied: Readonly<Record<ReceiptOutcome, Metric.Counter<number>>> = byLabel(
  { delivered: "delivered", undeliverable: "undeliverable", ignored: "ignored" },
  (outcome) =>
    Metric.counter("sms_receipts_applied_total", {
      description:
        "Delivery receipts applied to their message, by outcome (ignored: the message was already final, a repeat or out of order)",
      incremental: true,
      attributes: { outcome }
    })
)

/** Adds what one round of the receipt applier did, by outcome (a `ReceiptRound` fits as it is). */
export const countReceiptsApplied = (round: Readonly<Record<ReceiptOutcome, number>>): Effect.Effect<void> =>
  Effect.all(
    [
      Metric.update(receiptsApplied.delivered, round.delivered),
      Metric.update(receiptsApplied.undeliverable, round.undeliverable),
      Metric.update(receiptsApplied.ignored, round.ignored)
    ],
    { discard: true }
  )

/** `sms_receipts_dropped_total`, by reason: unmatched receipts removed after their time, or beyond the cap of their route. */
export const receiptsDropped = {
  expired: Metric.counter("sms_receipts_dropped_total", {
    description:
      "Unmatched receipts removed, by reason: expired (kept 7 days), over_cap (more than 10,000 unmatched for one route)",
    incremental: true,
    attributes: { reason: "expired" }
  }),
  over_cap: Metric.counter("sms_receipts_dropped_total", {
    description:
      "Unmatched receipts removed, by reason: expired (kept 7 days), over_cap (more than 10,000 unmatched for one route)",
    incremental: true,
    attributes: { reason: "over_cap" }
  })
} as const

/** `sms_smpp_refused_total`: what an SMSC sent that the adapter refused or could not use. */
export const smppRefused = Metric.counter("sms_smpp_refused_total", {
  description:
    "PDUs and fields from an SMSC the adapter refused or could not use (a malformed or unexpected PDU, a response matching no request, an invalid message id)",
  incremental: true
})

/** Why a provider's notification (a OneAPI receipt or inbound message) was refused or not stored. */
export type NotificationRefusal = "unknown_route" | "wrong_secret" | "bad_body" | "unknown_message"

/** A counter of `name` whose series are the routing file's names: built once per set of labels seen. */
const countersByLabels = <const K extends string>(name: string, description: string) => {
  const series = new Map<string, Metric.Counter<number>>()
  return (attributes: Readonly<Record<K, string>>): Metric.Counter<number> => {
    const key = Object.values<string>(attributes).join("\u0000")
    const found = series.get(key)
    if (found !== undefined) return found
    const made = Metric.counter(name, { description, incremental: true, attributes })
    series.set(key, made)
    return made
  }
}

/**
 * `sms_provider_notifications_refused_total`, by route (`unknown` for a name no entry has: the
 * path's name is not a label) and reason.
 */
export const notificationsRefused = countersByLabels<"route" | "reason">(
  "sms_provider_notifications_refused_total",
  "Notifications POSTed by a OneAPI provider that were refused (unknown_route, wrong_secret: 404; bad_body: 400) or named no message (unknown_message: 204, nothing stored), by route and reason"
)

/** `sms_provider_accepted_total`: the submissions a provider took, by the route that took them (docs/operators.md#fallback-routes). */
export const acceptedByRoute = countersByLabels<"route">(
  "sms_provider_accepted_total",
  "Submissions taken by a provider, by the route that took them (a fallback route counts the messages it took for another)"
)

/** `sms_provider_fallbacks_total`: messages a route provably never took, sent on to its fallback. */
export const fallbacks = countersByLabels<"from" | "to">(
  "sms_provider_fallbacks_total",
  "Messages a route provably never took (no connection, bind or token refused, throttled past the deadline) sent on to its fallback, by route and fallback"
)

// ---------------------------------------------------------------------------------------------
// Status webhooks.

/** What a webhook attempt came to: delivered, to be tried again, or the delivery given up (or its endpoint gone: 410). */
export type WebhookAttemptOutcome = "succeeded" | "retried" | "failed"

/** `sms_webhook_attempts_total`, one series per outcome. */
export const webhookAttempts: Readonly<Record<WebhookAttemptOutcome, Metric.Counter<number>>> = byLabel(
  { succeeded: "succeeded", retried: "retried", failed: "failed" },
  (outcome) =>
    Metric.counter("sms_webhook_attempts_total", {
      description:
        "Webhook delivery attempts, by outcome (retried: failed and scheduled again; failed: the delivery was given up)",
      incremental: true,
      attributes: { outcome }
    })
)

/** `sms_webhook_backlog_oldest_age_seconds`. */
export const webhookBacklogOldestAge = Metric.gauge("sms_webhook_backlog_oldest_age_seconds", {
  description:
    "How long the oldest due webhook delivery of an enabled endpoint has waited, in seconds (0 when none waits)"
})

// ---------------------------------------------------------------------------------------------
// Gauges read from the database at scrape time (DatabaseGauges.ts sets them).

/** `sms_messages`, one series per status. */
export const messagesByStatus: Readonly<Record<MessageStatus, Metric.Gauge<number>>> = byLabel(
  Object.fromEntries(MessageStatuses.map((s) => [s, s])) as Record<MessageStatus, string>,
  (status) =>
    Metric.gauge("sms_messages", {
      description:
        "Messages by status, in the whole database (final statuses recounted at most every SMS_METRICS_RECOUNT_INTERVAL_MS)",
      attributes: { status }
    })
)

/** `sms_due_backlog_messages`. */
export const dueBacklog = Metric.gauge("sms_due_backlog_messages", {
  description: "Scheduled messages whose due time has passed, still waiting to be handed to the provider"
})

/** `sms_due_backlog_oldest_age_seconds`. */
export const dueBacklogOldestAge = Metric.gauge("sms_due_backlog_oldest_age_seconds", {
  description: "How long the oldest message of the due backlog has been due, in seconds (0 when the backlog is empty)"
})

/** `sms_reserved_credits`. */
export const reservedCredits = Metric.gauge("sms_reserved_credits", {
  description: "Credits reserved by messages not yet settled (sum over every organisation's credit lots)"
})

/** `sms_receipts_unmatched`. */
export const receiptsUnmatched = Metric.gauge("sms_receipts_unmatched", {
  description:
    "Delivery receipts stored that no message has taken after their first try (kept 7 days, at most 10,000 per route)"
})

/** `sms_retention_backlog_messages`. */
export const retentionBacklog = Metric.gauge("sms_retention_backlog_messages", {
  description:
    "Messages past their organisation's retention not erased yet (recounted at most every SMS_METRICS_RECOUNT_INTERVAL_MS; retention erases them within an hour)"
})

const tableSeries = new Map<string, { readonly rows: Metric.Gauge<number>; readonly bytes: Metric.Gauge<number> }>()

/** `sms_table_rows` and `sms_table_bytes` of one table, built on the first sight of its name (the schema's tables: a bounded set). */
export const tableGauges = (table: string) => {
  const found = tableSeries.get(table)
  if (found !== undefined) return found
  const made = {
    rows: Metric.gauge("sms_table_rows", {
      description:
        "Rows of each table of the schema, as PostgreSQL estimates them (pg_class.reltuples, as of the last VACUUM or ANALYZE)",
      attributes: { table }
    }),
    bytes: Metric.gauge("sms_table_bytes", {
      description:
        "Bytes of each table of the schema on disk, with its indexes and TOAST (pg_total_relation_size; partitions summed)",
      attributes: { table }
    })
  }
  tableSeries.set(table, made)
  return made
}

/** `sms_database_up`. */
export const databaseUp = Metric.gauge("sms_database_up", {
  description:
    "1 when this scrape read the database gauges, 0 when the database did not answer in time (they then keep their last values)"
})

/** Every series known in advance, so each one is exported (at 0) from the first scrape on. */
const knownSeries: ReadonlyArray<Metric.Metric<never, unknown>> = [
  admissionCounter("messages", 201, false),
  admissionCounter("messages", 201, true),
  admissionCounter("messages", 202, false),
  admissionCounter("messages", 202, true),
  admissionCounter("message-batches", 202, false),
  admissionCounter("message-batches", 202, true),
  ...Object.values(submitDuration),
  ...Object.values(providerQueries),
  ...Object.values(receiptsApplied),
  smppRefused,
  ...Object.values(receiptsDropped),
  ...Object.values(messagesByStatus),
  dueBacklog,
  dueBacklogOldestAge,
  reservedCredits,
  receiptsUnmatched,
  retentionBacklog,
  ...Object.values(webhookAttempts),
  webhookBacklogOldestAge,
  databaseUp
]

/** Registers every known series without changing it (reading a metric registers it). */
export const registerKnownSeries: Effect.Effect<void> = Effect.forEach(knownSeries, Metric.value, { discard: true })

// ---------------------------------------------------------------------------------------------
// Two-way messages and consent (docs/two-way.md).

/** `sms_inbound_total`: inbound messages made from their parts, routed to an organisation or kept unrouted. */
export const inboundMessages: Readonly<Record<"true" | "false", Metric.Counter<number>>> = byLabel(
  { true: "true", false: "false" },
  (routed) =>
    Metric.counter("sms_inbound_total", {
      description:
        "Inbound (mobile-originated) messages received, by whether they were routed to an organisation (unrouted ones are kept for the operator)",
      incremental: true,
      attributes: { routed }
    })
)

/** `sms_opt_outs`, one series per source. */
export const optOutsBySource: Readonly<Record<"sms" | "api" | "operator", Metric.Gauge<number>>> = byLabel(
  { sms: "sms", api: "api", operator: "operator" },
  (source) =>
    Metric.gauge("sms_opt_outs", {
      description: "Numbers opted out of an organisation's messages, over every organisation, by how they opted out",
      attributes: { source }
    })
)
