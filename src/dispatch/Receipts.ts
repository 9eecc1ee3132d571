/**
 * Applying stored delivery receipts (contract section 8): a pending receipt moves its `accepted`
 * message to `delivered` or `undeliverable`, in sets (one statement for a set). A receipt whose
 * message cannot take it yet (the provider's id is not known yet, or the acceptance is still
 * being settled) stays pending and is tried again with backoff; one for a message already final
 * is marked ignored (a repeat, or out of order). Nothing is ever deleted: unmatched receipts stay
 * pending and are counted.
 */
import { Context, Duration, Effect, Layer, Queue } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { countReceiptsApplied } from "../observability/Metrics.ts"
import { now } from "../Time.ts"

/** Most receipts applied in one statement. */
export const receiptSetSizeMax = 500
/** First retry of a receipt its message cannot take yet; doubled each time. */
export const receiptRetryFirstMs = 100
/** Longest wait between two tries of a pending receipt. */
export const receiptRetryMaxMs = 60_000

/** What one set did. */
export interface ReceiptRound {
  readonly delivered: number
  readonly undeliverable: number
  readonly ignored: number
  /** Left pending (message not found, or not yet accepted). */
  readonly pending: number
}

export const emptyRound: ReceiptRound = { delivered: 0, undeliverable: 0, ignored: 0, pending: 0 }

export class Receipts extends Context.Service<Receipts, {
  /** Applies up to `receiptSetSizeMax` receipts whose try is due, in one statement. */
  readonly applyDue: Effect.Effect<ReceiptRound, SqlError.SqlError>
  /** When the next pending receipt is due, if any. */
  readonly nextDue: Effect.Effect<Date | undefined, SqlError.SqlError>
  /** Pending receipts, and how many of them have been tried more than once (their message is not known yet, or never will be). */
  readonly pendingCounts: Effect.Effect<{ readonly pending: number; readonly unmatched: number }, SqlError.SqlError>
  /** Tells the applier that receipts were stored. */
  readonly wake: Effect.Effect<void>
  /** Waits until woken, or `ms` at the most. */
  readonly awaitWake: (ms: number) => Effect.Effect<void>
}>()("sms/Receipts") {
  static readonly layer = Layer.effect(Receipts, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const signal = yield* Queue.sliding<true>(1)

    const applyDue = Effect.gen(function*() {
      const at = yield* now
      // Each receipt's fate is decided on its message row, locked (so the status read is the one
      // the update sees): `accepted` -> applied, final -> ignored, anything else or no message ->
      // pending. Of several receipts of one message in a set, the first decides; the others wait
      // for the next set. Every join then goes through a primary key (no join between CTEs: the
      // planner would nest loops over them, quadratic in the set's size).
      const rows = yield* sql<{ state: string; outcome: string; n: number }>`WITH r AS (
          SELECT id, provider_ref, outcome, occurred_at, attempts FROM provider_receipts
          WHERE state = 'pending' AND next_attempt_at <= ${at}
          ORDER BY next_attempt_at, id LIMIT ${receiptSetSizeMax}
          FOR UPDATE SKIP LOCKED),
        d AS (
          SELECT r.id, r.outcome, r.occurred_at, r.attempts, m.organisation_id, m.id AS message_id,
            CASE
              WHEN m.id IS NULL OR row_number() OVER (PARTITION BY r.provider_ref ORDER BY r.id) > 1 THEN 'pending'
              WHEN m.status = 'accepted' THEN 'applied'
              WHEN m.status IN ('delivered', 'undeliverable', 'failed', 'blocked') THEN 'ignored'
              ELSE 'pending'
            END AS state
          FROM (SELECT * FROM r ORDER BY provider_ref, id) AS r
          LEFT JOIN LATERAL (
            SELECT organisation_id, id, status FROM messages WHERE provider_message_id = r.provider_ref
            ORDER BY organisation_id, id LIMIT 1 FOR UPDATE) AS m ON true),
        u AS (
          UPDATE messages AS m SET status = d.outcome, delivery_time = d.occurred_at, updated_at = ${at}
          FROM d
          WHERE d.state = 'applied' AND m.organisation_id = d.organisation_id AND m.id = d.message_id
          RETURNING m.organisation_id, m.id, d.outcome),
        e AS (
          INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
          SELECT organisation_id, id, 'accepted', outcome, 'receipt', ${at} FROM u),
        s AS (
          UPDATE provider_receipts AS p SET
            state = d.state,
            organisation_id = d.organisation_id,
            message_id = d.message_id,
            attempts = d.attempts + 1,
            next_attempt_at = ${at}::timestamptz + make_interval(secs => least(
              ${receiptRetryFirstMs / 1000}::float8 * power(2, d.attempts), ${receiptRetryMaxMs / 1000}::float8)),
            settled_at = CASE WHEN d.state = 'pending' THEN NULL ELSE ${at}::timestamptz END
          FROM d WHERE p.id = d.id
          RETURNING p.state, p.outcome)
        SELECT state, outcome, count(*)::integer AS n FROM s GROUP BY state, outcome`
      const count = (state: string, outcome?: string) =>
        rows.filter((r) => r.state === state && (outcome === undefined || r.outcome === outcome)).reduce((n, r) => n + r.n, 0)
      return {
        delivered: count("applied", "delivered"),
        undeliverable: count("applied", "undeliverable"),
        ignored: count("ignored"),
        pending: count("pending")
      } satisfies ReceiptRound
    }).pipe(Effect.tap(countReceiptsApplied), Effect.withSpan("Receipts.applyDue"))

    return Receipts.of({
      applyDue,
      nextDue: sql<{ at: Date | null }>`SELECT min(next_attempt_at) AS at FROM provider_receipts WHERE state = 'pending'`.pipe(
        Effect.map(([row]) => row?.at ?? undefined)
      ),
      pendingCounts: sql<{ pending: number; unmatched: number }>`SELECT count(*)::integer AS pending,
          (count(*) FILTER (WHERE attempts > 1))::integer AS unmatched
        FROM provider_receipts WHERE state = 'pending'`.pipe(Effect.map(([row]) => row ?? { pending: 0, unmatched: 0 })),
      wake: Queue.offer(signal, true).pipe(Effect.asVoid),
      awaitWake: (ms) => Queue.take(signal).pipe(Effect.timeoutOrElse({ duration: Duration.millis(ms), orElse: () => Effect.succeed(true) }), Effect.asVoid)
    })
  }))
}
