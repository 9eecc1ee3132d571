/**
 * The SQL that hands work to the background fibers. Claims use `FOR UPDATE SKIP LOCKED`, so any
 * number of processes can run them at once.
 *
 * A due scheduled message is first claimed (leased to one process for `claimLeaseMs`, still
 * `scheduled`), then started just before its submission: the move to `processing` is the one
 * exclusive step, so a message is started, and sent, by one process only, even if its claim ran
 * out. A claim that dies with its process simply expires and the message is claimed again.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { MessageRow } from "../messages/MessageBody.ts"
import { messageColumns } from "../messages/MessageStore.ts"

/** How long a dispatcher's claim on a scheduled message lasts before another process may claim it. */
export const claimLeaseMs = 10_000

/** Why a claimed message was not started. */
export type StartRefusal = "sms_unavailable" | "sender_unavailable" | "gone"

/** What a late answer from the provider said about an unknown message. */
export interface Evidence {
  readonly result: "accepted" | "rejected"
  readonly providerRef: string | null
  readonly reason: string | null
}

export interface VerificationDue extends MessageRow {
  readonly providerRef: string | null
  readonly evidence: Evidence | null
}

const returned = messageColumns("m")

export class WorkQueue extends Context.Service<WorkQueue, {
  /**
   * Claims up to `limit` scheduled messages due at `at` for `workerId` (earliest due first, then
   * in admission order, batch members in their order); they stay `scheduled` until started.
   */
  readonly claimDue: (at: Date, limit: number, workerId: string) => Effect.Effect<ReadonlyArray<MessageRow>, SqlError.SqlError>
  /**
   * Starts claimed messages, in one statement: each one still scheduled whose organisation has
   * SMS enabled and whose sender is active becomes `processing`, marked as handed over at `at`
   * and owned by `workerId`. Returns, per message, undefined when started or why not.
   */
  readonly start: (
    messages: ReadonlyArray<{ readonly organisationId: string; readonly id: string }>,
    at: Date,
    workerId: string
  ) => Effect.Effect<ReadonlyArray<StartRefusal | undefined>, SqlError.SqlError>
  /** Gives back the claims `workerId` still holds on messages it has not started (it is stopping). */
  readonly releaseClaims: (workerId: string) => Effect.Effect<void, SqlError.SqlError>
  /** When the next scheduled message falls due, if any. */
  readonly nextDue: Effect.Effect<Date | undefined, SqlError.SqlError>
  /**
   * Claims up to `limit` unknown messages whose verification is due, pushing their next check
   * back (bounded backoff), with the late answer the provider gave about each, if any.
   */
  readonly claimVerification: (at: Date, limit: number, intervalMs: number) => Effect.Effect<ReadonlyArray<VerificationDue>, SqlError.SqlError>
  /** When the next verification falls due, if any. */
  readonly nextVerification: Effect.Effect<Date | undefined, SqlError.SqlError>
}>()("sms/WorkQueue") {
  static readonly layer = Layer.effect(WorkQueue, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return WorkQueue.of({
      claimDue: (at, limit, workerId) =>
        sql<MessageRow>`WITH due AS (
            SELECT organisation_id, id FROM messages
            WHERE status = 'scheduled' AND due_at <= ${at} AND (claim_until IS NULL OR claim_until < ${at})
            ORDER BY due_at, created_at, batch_position
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          UPDATE messages AS m SET worker_id = ${workerId}, claim_until = ${new Date(at.getTime() + claimLeaseMs)}
          FROM due WHERE m.organisation_id = due.organisation_id AND m.id = due.id
          RETURNING ${sql.literal(returned)}`,
      start: (messages, at, workerId) =>
        Effect.gen(function*() {
          if (messages.length === 0) return []
          const rows = messages.map((m) => ({ organisation_id: m.organisationId, id: m.id }))
          const found = yield* sql<{ organisationId: string; id: string; smsEnabled: boolean; senderActive: boolean }>`WITH x AS (
              SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(organisation_id uuid, id uuid)),
            c AS (
              SELECT m.organisation_id, m.id, o.sms_enabled, coalesce(s.active, false) AS sender_active
              FROM messages AS m
              JOIN x ON x.organisation_id = m.organisation_id AND x.id = m.id
              JOIN organisations AS o ON o.id = m.organisation_id
              LEFT JOIN senders AS s ON s.organisation_id = m.organisation_id AND s.name = m.sender_name
              WHERE m.status = 'scheduled'
              ORDER BY m.organisation_id, m.id
              FOR UPDATE OF m),
            u AS (
              UPDATE messages AS m SET status = 'processing', submitted_at = ${at}, updated_at = ${at},
                worker_id = ${workerId}, claim_until = NULL
              FROM c WHERE m.organisation_id = c.organisation_id AND m.id = c.id AND c.sms_enabled AND c.sender_active
              RETURNING m.organisation_id, m.id),
            e AS (
              INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
              SELECT organisation_id, id, 'scheduled', 'processing', 'dispatch', ${at} FROM u)
            SELECT organisation_id::text, id::text, sms_enabled, sender_active FROM c`
          const byKey = new Map(found.map((f) => [`${f.organisationId}/${f.id}`, f]))
          return messages.map((m): StartRefusal | undefined => {
            const f = byKey.get(`${m.organisationId}/${m.id}`)
            return f === undefined ? "gone" : !f.smsEnabled ? "sms_unavailable" : !f.senderActive ? "sender_unavailable" : undefined
          })
        }),
      releaseClaims: (workerId) =>
        sql`UPDATE messages SET worker_id = NULL, claim_until = NULL
          WHERE worker_id = ${workerId} AND status = 'scheduled'`.pipe(Effect.asVoid),
      nextDue: sql<{ at: Date | null }>`SELECT min(due_at) AS at FROM messages WHERE status = 'scheduled'`.pipe(
        Effect.map(([row]) => row?.at ?? undefined)
      ),
      claimVerification: (at, limit, intervalMs) =>
        sql<VerificationDue & { evidenceResult: "accepted" | "rejected" | null; evidenceRef: string | null; evidenceReason: string | null }>`
          WITH v AS (
            SELECT organisation_id, id FROM messages
            WHERE status = 'unknown' AND verify_at <= ${at}
            ORDER BY verify_at LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          UPDATE messages AS m SET verify_attempts = m.verify_attempts + 1,
            verify_at = ${at}::timestamptz + make_interval(secs => ${intervalMs / 1000}::float8 * power(2, least(m.verify_attempts + 1, 6)))
          FROM v LEFT JOIN provider_evidence AS ev ON ev.organisation_id = v.organisation_id AND ev.message_id = v.id
          WHERE m.organisation_id = v.organisation_id AND m.id = v.id
          RETURNING ${sql.literal(returned)}, m.provider_message_id AS provider_ref,
            ev.result AS evidence_result, ev.provider_ref AS evidence_ref, ev.reason AS evidence_reason`.pipe(
          Effect.map((rows) =>
            rows.map(({ evidenceResult, evidenceRef, evidenceReason, ...m }) => ({
              ...m,
              evidence: evidenceResult === null ? null : { result: evidenceResult, providerRef: evidenceRef, reason: evidenceReason }
            })))
        ),
      nextVerification: sql<{ at: Date | null }>`SELECT min(verify_at) AS at FROM messages WHERE status = 'unknown'`.pipe(
        Effect.map(([row]) => row?.at ?? undefined)
      )
    })
  }))
}
