/**
 * The SQL that hands work to the background fibers. Claims use `FOR UPDATE SKIP LOCKED`, so
 * several processes can run them at once and each message is claimed by exactly one.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { MessageRow } from "../messages/MessageBody.ts"
import { messageColumns } from "../messages/MessageStore.ts"

export interface ClaimedMessage extends MessageRow {
  /** SMS was enabled for the organisation at claim time. */
  readonly smsEnabled: boolean
  /** The message's sender was registered and active at claim time. */
  readonly senderActive: boolean
}

export interface StaleMessage extends MessageRow {
  /** The provider may have been called: recovery settles it as unknown, not failed. */
  readonly maybeSent: boolean
}

const returned = messageColumns("m")

export class WorkQueue extends Context.Service<WorkQueue, {
  /**
   * Claims up to `limit` scheduled messages due at `at` (earliest due first, then in admission
   * order, batch members in their order). Those whose organisation and sender are available
   * become `processing`, marked as handed over; the others stay `scheduled`, locked until the
   * caller's transaction ends, for the caller to settle as blocked or failed.
   */
  readonly claimDue: (at: Date, limit: number) => Effect.Effect<ReadonlyArray<ClaimedMessage>, SqlError.SqlError>
  /** When the next scheduled message falls due, if any. */
  readonly nextDue: Effect.Effect<Date | undefined, SqlError.SqlError>
  /** Claims up to `limit` unknown messages whose verification is due, pushing their next check back (bounded backoff). */
  readonly claimVerification: (at: Date, limit: number, intervalMs: number) => Effect.Effect<ReadonlyArray<MessageRow>, SqlError.SqlError>
  /** Messages left in `processing` since before `olderThan` (their process died mid-way). */
  readonly staleProcessing: (olderThan: Date, limit: number) => Effect.Effect<ReadonlyArray<StaleMessage>, SqlError.SqlError>
}>()("sms/WorkQueue") {
  static readonly layer = Layer.effect(WorkQueue, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return WorkQueue.of({
      claimDue: (at, limit) =>
        sql<ClaimedMessage>`WITH due AS (
            SELECT m.organisation_id, m.id, o.sms_enabled, coalesce(s.active, false) AS sender_active
            FROM messages m
            JOIN organisations o ON o.id = m.organisation_id
            LEFT JOIN senders s ON s.organisation_id = m.organisation_id AND s.name = m.sender_name
            WHERE m.status = 'scheduled' AND m.due_at <= ${at}
            ORDER BY m.due_at, m.created_at, m.batch_position
            LIMIT ${limit}
            FOR UPDATE OF m SKIP LOCKED),
          u AS (
            UPDATE messages m SET status = 'processing', updated_at = ${at}, submitted_at = ${at}
            FROM due
            WHERE m.organisation_id = due.organisation_id AND m.id = due.id AND due.sms_enabled AND due.sender_active
            RETURNING m.organisation_id, m.id),
          e AS (
            INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
            SELECT organisation_id, id, 'scheduled', 'processing', 'dispatch', ${at} FROM u)
          SELECT ${sql.literal(returned)}, due.sms_enabled, due.sender_active
          FROM messages m JOIN due ON m.organisation_id = due.organisation_id AND m.id = due.id`.pipe(
          // the statement sees the rows as they were: available ones are now `processing`
          Effect.map((rows) => rows.map((r) => (r.smsEnabled && r.senderActive ? { ...r, status: "processing" as const } : r))),
          sql.withTransaction
        ),
      nextDue: sql<{ at: Date | null }>`SELECT min(due_at) AS at FROM messages WHERE status = 'scheduled'`.pipe(
        Effect.map((rows) => rows[0]?.at ?? undefined)
      ),
      claimVerification: (at, limit, intervalMs) =>
        sql<MessageRow>`WITH v AS (
            SELECT organisation_id, id FROM messages
            WHERE status = 'unknown' AND verify_at <= ${at}
            ORDER BY verify_at LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          UPDATE messages m SET verify_attempts = m.verify_attempts + 1,
            verify_at = ${at}::timestamptz + make_interval(secs => ${intervalMs / 1000}::float8 * power(2, least(m.verify_attempts + 1, 6)))
          FROM v WHERE m.organisation_id = v.organisation_id AND m.id = v.id
          RETURNING ${sql.literal(returned)}`.pipe(sql.withTransaction),
      staleProcessing: (olderThan, limit) =>
        sql<StaleMessage>`SELECT ${sql.literal(returned)}, (m.submitted_at IS NOT NULL) AS maybe_sent
          FROM messages m WHERE m.status = 'processing' AND m.updated_at < ${olderThan}
          ORDER BY m.updated_at LIMIT ${limit}`
    })
  }))
}
