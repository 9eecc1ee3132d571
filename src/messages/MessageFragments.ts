/**
 * The fragments of `messages` that other modules' statements compose: the one-statement admission
 * (QuickAdmission.ts), and the receipts' matching and application (receipts/ReceiptStore.ts), with
 * the batch completion their changes may bring (BatchCompletion.ts).
 */
import type { SqlClient, Statement } from "effect/sql"
import { webhookOutbox } from "../webhooks/WebhookStore.ts"
import { type BatchCheck, batchCompletion } from "./BatchCompletion.ts"
import { admitted, appended } from "./CompactTimeline.ts"
import { movedColumns, sharedTexts } from "./MessageSql.ts"

type Fragment = Statement.Fragment

/** Fragments of messages for statements composed elsewhere (the one-statement admission, receipts). */
export const messageFragments = (sql: SqlClient.SqlClient) => ({
  /**
   * The CTEs `ins` (messages inserted from `source`, a query giving `id, batch_id, batch_position,
   * to_number, sender_name, status, send_at, worker_id` per message, each with the timeline's
   * admission entry) and `texts` (the text of their batch, if they are one's members).
   */
  insert: (organisationId: string, text: string, segments: number, source: Fragment, at: Date) =>
    sql`ins AS (
        INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text, segments, status,
          send_at, due_at, worker_id, created_at, updated_at, timeline)
        SELECT ${organisationId}, s.id, s.batch_id, s.batch_position, s.to_number, s.sender_name,
          CASE WHEN s.batch_id IS NULL THEN ${text}::text END, ${segments}, s.status,
          s.send_at, CASE WHEN s.status = 'scheduled' THEN coalesce(s.send_at, t.at) END, s.worker_id, t.at, t.at,
          ${sql.literal(admitted("s.status", "t.at"))}
        FROM (${source}) AS s, (SELECT ${at}::timestamptz AS at) AS t
        RETURNING organisation_id, id, status, batch_id),
      ${sharedTexts(sql, organisationId, sql`ins`, sql`${text}::text`)}`,
  /**
   * A lateral subquery giving the newest `accepted` message with provider ref `ref` (and number
   * `recipient`, unless it is null) as `organisation_id, id, accepted_at`, locked.
   *
   * The messages with the ref are found first, by the ref's index alone (`OFFSET 0` keeps the
   * status test and the order out of that subquery): with statistics taken before a drain (no
   * message accepted yet), the planner otherwise walked the whole `messages_accepted` index
   * backwards for each receipt, 900 pages a receipt at 30,000 accepted.
   */
  newestAccepted: (ref: Fragment, recipient: Fragment) =>
    sql`SELECT organisation_id, id, accepted_at FROM (
        SELECT organisation_id, id, status, to_number, created_at, updated_at AS accepted_at FROM messages
        WHERE provider_message_id = ${ref} OFFSET 0) AS c
      WHERE status = 'accepted' AND (${recipient} IS NULL OR to_number = ${recipient})
      ORDER BY accepted_at DESC, created_at DESC, id DESC LIMIT 1
      FOR UPDATE`,
  /** Whether a message to `recipient` still waits for an outcome (its acceptance may be settling, or its answer was lost). */
  inFlightTo: (recipient: Fragment) =>
    sql`EXISTS (SELECT 1 FROM messages AS f WHERE f.to_number = ${recipient} AND f.status IN ('processing', 'unknown'))`,
  /** Whether a message has provider ref `ref` (and number `recipient`, unless null): with none accepted, all are final. */
  hasRef: (ref: Fragment, recipient: Fragment) =>
    sql`EXISTS (SELECT 1 FROM messages AS f WHERE f.provider_message_id = ${ref} AND (${recipient} IS NULL OR f.to_number = ${recipient}))`,
  /**
   * The CTEs `u` (each row of `applied`, a CTE of `organisation_id, message_id, outcome,
   * occurred_at, accepted_at`, moves its accepted message to the outcome, delivered at the
   * receipt's time but never before its acceptance), `e` (their timeline entries) and the
   * webhook events of the changes (`webhookOutbox`).
   */
  applyReceipts: (applied: string, at: Date) =>
    sql`u AS (
        UPDATE messages AS m SET status = a.outcome, delivery_time = greatest(a.occurred_at, a.accepted_at), updated_at = r.at,
          timeline = ${sql.literal(appended("m.timeline", "a.outcome", "'receipt'", "r.at"))}
        FROM ${sql(applied)} AS a, (SELECT ${at}::timestamptz AS at) AS r
        WHERE m.organisation_id = a.organisation_id AND m.id = a.message_id
        RETURNING m.organisation_id, m.id, a.outcome, r.at, ${sql.literal(movedColumns("m"))}),
      ${webhookOutbox(sql).messageEvents("u")}`,
  /** The columns that tell, per row of the CTE `u` of `applyReceipts`, whether its batch may have just completed. */
  batchCheck: (moved: string) => batchCompletion(sql).batchCheck(moved),
  /** Writes the `batch.completed` events of the batches checked that did complete; run it in the transaction of the change. */
  completeBatches: (checked: ReadonlyArray<BatchCheck>, at: Date) => batchCompletion(sql).completeBatches(checked, at),
  /** The statement part that makes the unknown messages without a provider id to the numbers of `recipients` (a query) due for verification at `at`. */
  verifyOrphansNow: (recipients: Fragment, at: Date) =>
    sql`UPDATE messages AS m SET verify_at = ${at}
      WHERE m.status = 'unknown' AND m.provider_message_id IS NULL AND (m.verify_at IS NULL OR m.verify_at > ${at})
        AND m.to_number IN (${recipients})`,
  /**
   * Unknown or processing messages without a provider id to `recipient` whose submission window
   * (`submitted_at` to the minute, then `windowAfter` later, give or take `skew`) holds
   * `submittedAt`, other than `except` (`organisation_id, id`), as an EXISTS predicate.
   */
  otherOrphanFits: (
    recipient: Fragment,
    submittedAt: Fragment,
    except: { readonly organisationId: Fragment; readonly id: Fragment },
    skew: string,
    windowAfter: string
  ) =>
    sql`EXISTS (SELECT 1 FROM messages AS m
      WHERE m.to_number = ${recipient} AND m.status IN ('processing', 'unknown')
        AND m.provider_message_id IS NULL AND m.submitted_at IS NOT NULL
        AND NOT (m.organisation_id = ${except.organisationId} AND m.id = ${except.id})
        AND ${submittedAt} BETWEEN date_trunc('minute', m.submitted_at) - ${skew}::interval AND m.submitted_at + ${windowAfter}::interval)`
})
