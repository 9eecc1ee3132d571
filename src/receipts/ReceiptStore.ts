/**
 * The table of delivery receipts waiting for their message (`provider_receipts`), owned here:
 * what a provider reports is decided in the statement that receives it, before the provider is
 * told it was received. A receipt whose message is accepted is applied at once (the message's
 * status, delivery time and timeline keep it: nothing else is stored); a repeat is ignored; any
 * other is stored pending and tried again later, then applied or ignored as a repeat (and removed
 * either way), or left pending until it is given up. A set is one statement, composed with the
 * fragments of messages (MessageFragments.ts).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase, replanned } from "../db/Statements.ts"
import type { BatchCheck } from "../messages/BatchCompletion.ts"
import { messageFragments } from "../messages/MessageFragments.ts"
import { inTransaction } from "../db/Transactions.ts"
import type { IncomingReceipt } from "../provider/Provider.ts"

/** Counts of what one applied set did, by state and outcome. */
export type RoundCounts = ReadonlyArray<{ readonly state: string; readonly outcome: string; readonly n: number }>

/** An unknown message without the provider's id, as the verifier asks about it. */
export interface Orphan {
  readonly organisationId: string
  readonly id: string
  readonly to: string
  /** The route that serves its number. */
  readonly route: string
  /** When it was marked as handed over to the provider. */
  readonly submittedAt: Date
}

/** How a pending receipt is tried again: first retry and longest wait, in ms. */
export interface RetryPolicy {
  readonly firstMs: number
  readonly maxMs: number
}

export class ReceiptStore extends Context.Service<
  ReceiptStore,
  {
    /**
     * Decides and applies receipts as they arrive, in one statement: one whose message is accepted
     * is applied, a repeat (its messages all final) is counted, neither is stored; any other is
     * stored pending, tried again after the first retry. What it did.
     */
    readonly receive: (receipts: ReadonlyArray<IncomingReceipt>, at: Date, retry: RetryPolicy) => Fails<RoundCounts>
    /** Applies up to `limit` receipts due at `at` in one statement (see Receipts.ts), removing those applied or ignored; what it did. */
    readonly applyDue: (at: Date, limit: number, retry: RetryPolicy) => Fails<RoundCounts>
    /** When the next pending receipt is due, if any. */
    readonly nextDue: Fails<Date | undefined>
    /** Removes pending receipts received before `cutoff`, and the oldest beyond `perRoute` tried ones per route; how many of each. */
    readonly dropUnmatched: (
      cutoff: Date,
      perRoute: number
    ) => Fails<{ readonly expired: number; readonly overCap: number }>
    /**
     * Per orphan, the provider ref of the one pending receipt of its route and number whose submit
     * date lies within `before` before its submission (to the minute) and `after` after it, when
     * exactly one does and it fits no other such message; by `organisationId/id`.
     */
    readonly orphanMatches: (
      orphans: ReadonlyArray<Orphan>,
      before: string,
      after: string
    ) => Fails<ReadonlyMap<string, string>>
    /** Makes the pending receipts of these provider refs due at `at`. */
    readonly retryAt: (providerRefs: ReadonlyArray<string>, at: Date) => Fails<void>
    /** Pending receipts that were tried at least once (for /metrics). */
    readonly unmatchedCount: Fails<number>
  }
>()("sms/ReceiptStore") {
  static readonly layer = Layer.effect(
    ReceiptStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const messages = messageFragments(sql)

      /** When a receipt tried for the `d.attempts + 1`-th time is tried next: the first retry, doubled each time, capped. */
      const nextAttempt = (at: Date, retry: RetryPolicy) =>
        sql`${at}::timestamptz + make_interval(secs => least(${retry.firstMs / 1000}::float8 * power(2, d.attempts), ${retry.maxMs / 1000}::float8))`

      /**
       * One set of receipts (`source`: a query giving `id, provider_ref, recipient, outcome,
       * occurred_at, submitted_at, attempts`) decided and applied in one statement, in a transaction
       * with the batch completions it causes; `write` records what became of each receipt as CTEs
       * ending in `s` (`state, outcome` per receipt). Returns the counts by state and outcome.
       *
       * Each receipt's fate is decided on its newest accepted message with its id and number,
       * locked (so the status read is the one the update sees). Of several receipts of one message
       * in a set, the first decides; the others wait for the next set, where they are repeats.
       * Every join goes through an index (no join between CTEs: the planner would nest loops over
       * them, quadratic in the set's size), planned for the tables as they are at each run (replanned).
       */
      const round = (source: Statement.Fragment, write: Statement.Fragment, at: Date) =>
        fromDatabase(
          replanned(sql<{ state: string; outcome: string; n: number } & BatchCheck>`WITH r AS (${source}),
          d AS (
            SELECT r.id, r.provider_ref, r.outcome, r.occurred_at, r.submitted_at, r.attempts, r.recipient,
              m.organisation_id, m.id AS message_id, m.accepted_at,
              CASE
                WHEN m.id IS NOT NULL THEN
                  CASE WHEN row_number() OVER (PARTITION BY m.organisation_id, m.id ORDER BY r.id) = 1 THEN 'applied' ELSE 'pending' END
                WHEN r.recipient IS NOT NULL AND ${messages.inFlightTo(sql`r.recipient`)} THEN 'pending'
                WHEN ${messages.hasRef(sql`r.provider_ref`, sql`r.recipient`)} THEN 'ignored'
                ELSE 'pending'
              END AS state
            FROM (SELECT * FROM r ORDER BY provider_ref, id) AS r
            LEFT JOIN LATERAL (${messages.newestAccepted(sql`r.provider_ref`, sql`r.recipient`)}) AS m ON true),
          applied AS (SELECT * FROM d WHERE state = 'applied'),
          ${messages.applyReceipts("applied", at)},
          nudged AS (
            -- a new receipt that found no message may be the lost answer of an unknown one: verify those now
            ${messages.verifyOrphansNow(sql`SELECT recipient FROM d WHERE d.state = 'pending' AND d.attempts = 0 AND d.recipient IS NOT NULL`, at)}),
          ${write}
          SELECT state, outcome, count(*)::integer AS n, NULL::text AS batch_organisation_id, NULL::text AS batch_id, false AS batch_check
          FROM s GROUP BY state, outcome
          UNION ALL SELECT NULL, NULL, 0, ${messages.batchCheck("u")} FROM u`).pipe(
            // a receipt that finishes a batch writes its batch.completed in the same transaction
            Effect.tap((rows) => messages.completeBatches(rows, at)),
            inTransaction(sql)
          )
        )

      return ReceiptStore.of({
        receive: (receipts, at, retry) => {
          const rows = receipts.map((r, i) => ({
            i,
            provider_ref: r.providerRef,
            outcome: r.outcome,
            occurred_at: r.occurredAt.toISOString(),
            recipient: r.recipient,
            submitted_at: r.submittedAt?.toISOString() ?? null
          }))
          // stored only when it waits: pending for its next try
          return round(
            sql`SELECT i AS id, provider_ref, recipient, outcome, occurred_at, submitted_at, 0 AS attempts
            FROM json_to_recordset(${JSON.stringify(rows)}::json)
              AS x(i integer, provider_ref text, outcome text, occurred_at timestamptz, recipient text, submitted_at timestamptz)`,
            sql`kept AS (
            INSERT INTO provider_receipts (provider_ref, outcome, occurred_at, recipient, submitted_at, received_at, state,
              attempts, next_attempt_at)
            SELECT provider_ref, outcome, occurred_at, recipient, submitted_at, ${at}, state, 1, ${nextAttempt(at, retry)}
            FROM d WHERE state = 'pending'
            RETURNING state, outcome),
          s AS (SELECT state, outcome FROM kept UNION ALL SELECT state, outcome FROM d WHERE state <> 'pending')`,
            at
          )
        },
        applyDue: (at, limit, retry) =>
          round(
            sql`SELECT id, provider_ref, recipient, outcome, occurred_at, submitted_at, attempts FROM provider_receipts
            WHERE state = 'pending' AND next_attempt_at <= ${at}
            ORDER BY next_attempt_at, id LIMIT ${limit}
            FOR UPDATE SKIP LOCKED`,
            sql`gone AS (
            DELETE FROM provider_receipts AS p USING d WHERE p.id = d.id AND d.state <> 'pending'
            RETURNING d.state, d.outcome),
          kept AS (
            UPDATE provider_receipts AS p SET attempts = d.attempts + 1, next_attempt_at = ${nextAttempt(at, retry)}
            FROM d WHERE p.id = d.id AND d.state = 'pending'
            RETURNING p.state, p.outcome),
          s AS (SELECT state, outcome FROM kept UNION ALL SELECT state, outcome FROM gone)`,
            at
          ),
        nextDue: fromDatabase(
          sql<{
            at: Date | null
          }>`SELECT min(next_attempt_at) AS at FROM provider_receipts WHERE state = 'pending'`.pipe(
            Effect.map(([row]) => row?.at ?? undefined)
          )
        ),
        dropUnmatched: (cutoff, perRoute) =>
          fromDatabase(
            sql<{ expired: number; overCap: number }>`WITH expired AS (
            DELETE FROM provider_receipts WHERE state = 'pending' AND received_at < ${cutoff} RETURNING id),
          ranked AS (
            SELECT id, row_number() OVER (PARTITION BY split_part(provider_ref, ':', 1) ORDER BY received_at DESC, id DESC) AS rank
            FROM provider_receipts WHERE state = 'pending' AND attempts > 0 AND received_at >= ${cutoff}),
          over_cap AS (
            DELETE FROM provider_receipts AS p USING ranked WHERE p.id = ranked.id AND ranked.rank > ${perRoute} RETURNING p.id)
          SELECT (SELECT count(*) FROM expired)::integer AS expired, (SELECT count(*) FROM over_cap)::integer AS over_cap`.pipe(
              Effect.map((rows) => rows[0]!)
            )
          ),
        orphanMatches: (orphans, before, after) => {
          if (orphans.length === 0) return Effect.succeed(new Map<string, string>())
          const rows = orphans.map((o) => ({
            organisation_id: o.organisationId,
            id: o.id,
            to_number: o.to,
            route: o.route,
            submitted_at: o.submittedAt.toISOString()
          }))
          // a receipt fits a message when its submit date (to the minute) lies within the message's
          // submission window, widened by the clock skew
          return fromDatabase(
            sql<{ organisationId: string; id: string; providerRef: string }>`WITH o AS (
            SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
              AS o(organisation_id uuid, id uuid, to_number text, route text, submitted_at timestamptz)),
          fits AS (
            SELECT DISTINCT o.organisation_id, o.id, r.provider_ref
            FROM o JOIN provider_receipts AS r ON r.state = 'pending' AND r.recipient = o.to_number
              AND split_part(r.provider_ref, ':', 1) = o.route
              AND r.submitted_at BETWEEN date_trunc('minute', o.submitted_at) - ${before}::interval
                AND o.submitted_at + ${after}::interval),
          single AS (
            SELECT organisation_id, id, min(provider_ref) AS provider_ref FROM fits GROUP BY organisation_id, id HAVING count(*) = 1)
          SELECT x.organisation_id::text, x.id::text, x.provider_ref FROM single AS x
          WHERE NOT EXISTS (
            SELECT 1 FROM provider_receipts AS r
            WHERE r.state = 'pending' AND r.provider_ref = x.provider_ref
              AND ${messages.otherOrphanFits(sql`r.recipient`, sql`r.submitted_at`, { organisationId: sql`x.organisation_id`, id: sql`x.id` }, before, after)})`.pipe(
              Effect.map((found) => new Map(found.map((f) => [`${f.organisationId}/${f.id}`, f.providerRef])))
            )
          )
        },
        retryAt: (providerRefs, at) =>
          providerRefs.length === 0
            ? Effect.void
            : fromDatabase(
                sql`UPDATE provider_receipts SET next_attempt_at = ${at}
              WHERE state = 'pending' AND provider_ref = ANY(${providerRefs}::text[])`.pipe(Effect.asVoid)
              ),
        unmatchedCount: fromDatabase(
          sql<{
            n: number
          }>`SELECT count(*)::float8 AS n FROM provider_receipts WHERE state = 'pending' AND attempts > 0`.pipe(
            Effect.map((rows) => rows[0]!.n)
          )
        )
      })
    })
  )
}
