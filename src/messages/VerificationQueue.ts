/**
 * The verification of messages whose result is unknown: when each one is asked about again
 * (`verifySchedule`), the claims of those due (and of one the operator asks about again), and
 * the provider's late answers about them (`provider_evidence`, owned here), which make a message
 * due for verification at once. Part of the MessageQueueStore (MessageQueueStore.ts).
 */
import { Effect } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { ProviderRef } from "../provider/Provider.ts"
import type { MessageRow } from "./MessageRow.ts"
import { instantOf, messageColumns } from "./MessageSql.ts"

/**
 * When an `unknown` message is asked about again: SMS_VERIFY_INTERVAL_MS after it became unknown,
 * then after a gap doubling at each check, at most hourly once it has been unknown for an hour,
 * daily once for a day; the last check is 30 days after it became unknown, and it then stays
 * `unknown` (credits reserved) until the operator asks again (POST .../verification).
 */
export const verifySchedule = {
  hourlyAfterMs: 3_600_000,
  dailyAfterMs: 86_400_000,
  stopAfterMs: 30 * 86_400_000
} as const

/** What a late answer from the provider said about an unknown message. */
export interface Evidence {
  readonly result: "accepted" | "rejected"
  readonly providerRef: string | null
  readonly reason: string | null
}

/** A late answer to store, about one message. */
export interface LateEvidence {
  readonly organisationId: string
  readonly messageId: string
  readonly result:
    | { readonly _tag: "Accepted"; readonly providerRef: ProviderRef }
    | { readonly _tag: "Rejected"; readonly reason: string }
}

export interface VerificationDue extends MessageRow {
  readonly providerRef: string | null
  /** When it was marked as handed over to the provider. */
  readonly submittedAt: Date | null
  readonly evidence: Evidence | null
}

export interface VerificationQueue {
  /**
   * Claims up to `limit` unknown messages whose verification is due, pushing their next check
   * back on the schedule of `verifySchedule`, with the late answer the provider gave about each, if any.
   */
  readonly claimVerification: (at: Date, limit: number, intervalMs: number) => Fails<ReadonlyArray<VerificationDue>>
  /**
   * The operator asks again: claims this message for a check now if it is `unknown` (waiting for a
   * concurrent claim of it), its schedule started again as if it had just become unknown.
   */
  readonly claimVerificationAgain: (
    organisationId: string,
    id: string,
    at: Date,
    intervalMs: number
  ) => Fails<VerificationDue | undefined>
  /** When the next verification falls due after `after` (null: the earliest, overdue included), if any. */
  readonly nextVerification: (after: Date | null) => Fails<Date | undefined>
  /** Stores late answers as evidence (one per message, the first kept) and makes their unknown messages due for verification at `at`. */
  readonly storeEvidence: (evidence: ReadonlyArray<LateEvidence>, at: Date) => Fails<void>
}

const returned = messageColumns("m")

/** The verification queue of the MessageQueueStore, on `sql`. */
export const verificationQueue = (sql: SqlClient.SqlClient): VerificationQueue => {
  const instant = instantOf(sql)

  /**
   * Claims the unknown messages `chosen` (a query of `organisation_id, id, since, attempts`:
   * since when each counts as unknown, its checks so far) and sets each one's next check on the
   * schedule; `updated_at` keeps `since`, the start of the schedule.
   */
  const claimForVerification = (at: Date, intervalMs: number, chosen: Statement.Fragment) => {
    const { hourlyAfterMs, dailyAfterMs, stopAfterMs } = verifySchedule
    const after = (ms: number) => sql`v.since + make_interval(secs => ${ms / 1000})`
    const gap = sql`CASE
      WHEN ${at}::timestamptz < ${after(hourlyAfterMs)}
        THEN least(make_interval(secs => ${intervalMs / 1000}::float8 * power(2, least(v.attempts + 1, 30))),
          make_interval(secs => ${hourlyAfterMs / 1000}))
      WHEN ${at}::timestamptz < ${after(dailyAfterMs)} THEN make_interval(secs => ${hourlyAfterMs / 1000})
      ELSE make_interval(secs => ${dailyAfterMs / 1000}) END`
    return fromDatabase(
      sql<
        VerificationDue & {
          evidenceResult: "accepted" | "rejected" | null
          evidenceRef: string | null
          evidenceReason: string | null
        }
      >`
    WITH v AS (${chosen})
    UPDATE messages AS m SET verify_attempts = v.attempts + 1, updated_at = v.since,
      verify_at = CASE WHEN ${at}::timestamptz >= ${after(stopAfterMs)} THEN NULL
        ELSE least(${at}::timestamptz + ${gap}, ${after(stopAfterMs)}) END
    FROM v LEFT JOIN provider_evidence AS ev ON ev.organisation_id = v.organisation_id AND ev.message_id = v.id
    WHERE m.organisation_id = v.organisation_id AND m.id = v.id
    RETURNING ${sql.literal(returned)}, m.provider_message_id AS provider_ref, m.submitted_at,
      ev.result AS evidence_result, ev.provider_ref AS evidence_ref, ev.reason AS evidence_reason`.pipe(
        Effect.map((rows) =>
          rows.map(({ evidenceResult, evidenceRef, evidenceReason, ...m }) => ({
            ...m,
            evidence:
              evidenceResult === null
                ? null
                : { result: evidenceResult, providerRef: evidenceRef, reason: evidenceReason }
          }))
        )
      )
    )
  }

  return {
    claimVerification: (at, limit, intervalMs) =>
      claimForVerification(
        at,
        intervalMs,
        sql`SELECT organisation_id, id, updated_at AS since, verify_attempts AS attempts FROM messages
      WHERE status = 'unknown' AND verify_at <= ${at}
      ORDER BY verify_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED`
      ),
    claimVerificationAgain: (organisationId, id, at, intervalMs) =>
      claimForVerification(
        at,
        intervalMs,
        sql`SELECT organisation_id, id, ${at}::timestamptz AS since, 0 AS attempts FROM messages
      WHERE organisation_id = ${organisationId} AND id = ${id} AND status = 'unknown'
      FOR UPDATE`
      ).pipe(Effect.map((rows) => rows[0])),
    nextVerification: (after) =>
      instant(
        sql`(SELECT min(verify_at) FROM messages WHERE status = 'unknown' AND verify_at > ${after ?? "-infinity"}::timestamptz)`
      ),
    storeEvidence: (evidence, at) => {
      const rows = evidence.map((r) => ({
        organisation_id: r.organisationId,
        message_id: r.messageId,
        result: r.result._tag === "Accepted" ? "accepted" : "rejected",
        provider_ref: r.result._tag === "Accepted" ? r.result.providerRef : null,
        reason: r.result._tag === "Rejected" ? r.result.reason : null
      }))
      return fromDatabase(
        sql`WITH x AS (
        SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
          AS x(organisation_id uuid, message_id uuid, result text, provider_ref text, reason text)),
      stored AS (
        INSERT INTO provider_evidence (organisation_id, message_id, result, provider_ref, reason, received_at)
        SELECT organisation_id, message_id, result, provider_ref, reason, ${at} FROM x
        ON CONFLICT DO NOTHING)
      UPDATE messages AS m SET verify_at = ${at}
      FROM x WHERE m.organisation_id = x.organisation_id AND m.id = x.message_id AND m.status = 'unknown'`.pipe(
          Effect.asVoid
        )
      )
    }
  }
}
