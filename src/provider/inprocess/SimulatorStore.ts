/**
 * The in-process simulator's own memory, owned here: what it received and how many times
 * (`simulator_messages`, a row written once a message), which receipts it owes and when
 * (`simulator_receipts_owed`, until the service stored them), so that its outcomes hold across
 * restarts and processes, as a real provider's would.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../../db/DatabaseUnavailable.ts"
import { fromDatabase, replanned } from "../../db/Statements.ts"

export type ReceiptKind = "delivered" | "undeliverable" | "none"

/** One submission as the simulator records it. */
export interface ReceivedRow {
  readonly organisationId: string
  readonly messageId: string
  readonly receipt: ReceiptKind
  /** When the receipt is owed; null when none is owed yet. */
  readonly receiptAt: Date | null
  /**
   * When a round may take the receipt (`claimDue`): its `receiptAt`, or later when the process
   * that received it sends it itself (the round then sends it only if that process did not).
   */
  readonly dueAt: Date | null
}

/** What recording a submission did: whether it is new (not a message handed over again), and where its owed receipt lies. */
export interface Recorded {
  readonly inserted: boolean
  /** The place of the receipt it owes now (`simulator_receipts_owed`); null when it owes none or is not new. */
  readonly owedRow: string | null
}

/** A receipt owed and due. */
export interface DueReceipt {
  /** Where its owed row lay when claimed (`sent` finds it there, unless the row changed since). */
  readonly rowAt: string
  readonly organisationId: string
  readonly messageId: string
  readonly receipt: "delivered" | "undeliverable"
  readonly receiptAt: Date
}

/** Which message: its organisation and id. */
export interface SimulatedKey {
  readonly organisationId: string
  readonly messageId: string
}

const keysJson = (keys: ReadonlyArray<SimulatedKey>) =>
  JSON.stringify(keys.map((k) => ({ organisation_id: k.organisationId, message_id: k.messageId })))

export class SimulatorStore extends Context.Service<
  SimulatorStore,
  {
    /**
     * Records submissions (a message handed over again keeps its first receipt; only its count of
     * submissions grows); what it did, by `organisationId/messageId`.
     */
    readonly receive: (rows: ReadonlyArray<ReceivedRow>, at: Date) => Fails<ReadonlyMap<string, Recorded>>
    /** Which of these messages it received, as `organisationId/messageId`. */
    readonly received: (keys: ReadonlyArray<SimulatedKey>) => Fails<ReadonlySet<string>>
    /** Owes the message's receipt at `at` unless it owes none or already owes it; whether it does now. */
    readonly oweReceipt: (organisationId: string, messageId: string, at: Date) => Fails<boolean>
    /** Claims up to `limit` receipts due at `at` until `resendAt` (sent again then unless confirmed). */
    readonly claimDue: (at: Date, resendAt: Date, limit: number) => Fails<ReadonlyArray<DueReceipt>>
    /**
     * These claimed receipts were stored by the service: owed no more. Each owed row is found where
     * its claim left it (a TID scan, no index); one changed since (a receipt forced) stays owed and
     * is sent again at its resend time, a repeat the service ignores.
     */
    readonly sent: (receipts: ReadonlyArray<Pick<DueReceipt, "rowAt" | "messageId">>) => Fails<void>
    /**
     * When the next receipt falls due, from `from` on (null: the earliest owed, overdue included).
     * A round that claimed everything due by its time looks from that time on: the index's entries
     * before it are those of receipts already taken, dead rows a scan from the start reads through
     * (thousands of pages a call in a drain, until a vacuum).
     */
    readonly nextDue: (from: Date | null) => Fails<Date | undefined>
    /** Owes `outcome` now for a message it received, whatever it owed; false when it never received it. */
    readonly forceReceipt: (
      organisationId: string,
      messageId: string,
      outcome: "delivered" | "undeliverable",
      at: Date
    ) => Fails<boolean>
    /** Forgets at most `limit` messages whose receipt was sent (and taken) before `before`; returns how many. */
    readonly dropReceipted: (before: Date, limit: number) => Fails<number>
  }
>()("sms/SimulatorStore") {
  static readonly layer = Layer.effect(
    SimulatorStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return SimulatorStore.of({
        receive: (received, at) => {
          const rows = received.map((r) => ({
            organisation_id: r.organisationId,
            message_id: r.messageId,
            receipt: r.receipt,
            receipt_at: r.receiptAt?.toISOString() ?? null,
            due_at: r.dueAt?.toISOString() ?? null
          }))
          // a new row has no xmax; one updated by ON CONFLICT has its updater's. Only a new one owes its receipt.
          return fromDatabase(
            sql<{ key: string; inserted: boolean; owedRow: string | null }>`WITH x AS (
            SELECT organisation_id, message_id, min(receipt) AS receipt, min(receipt_at) AS receipt_at, min(due_at) AS due_at, count(*) AS n
            FROM json_to_recordset(${JSON.stringify(rows)}::json)
              AS x(organisation_id uuid, message_id uuid, receipt text, receipt_at timestamptz, due_at timestamptz)
            GROUP BY organisation_id, message_id),
          m AS (
            INSERT INTO simulator_messages (organisation_id, message_id, receipt, receipt_at, received_at, submissions)
            SELECT organisation_id, message_id, receipt, receipt_at, ${at}, n FROM x
            ON CONFLICT (organisation_id, message_id) DO UPDATE SET submissions = simulator_messages.submissions + EXCLUDED.submissions
            RETURNING organisation_id, message_id, xmax = 0 AS inserted),
          o AS (
            INSERT INTO simulator_receipts_owed (organisation_id, message_id, due_at)
            SELECT x.organisation_id, x.message_id, x.due_at FROM x JOIN m USING (organisation_id, message_id)
            WHERE m.inserted AND x.due_at IS NOT NULL
            RETURNING organisation_id, message_id, ctid)
          SELECT m.organisation_id::text || '/' || m.message_id::text AS key, m.inserted, o.ctid::text AS owed_row
          FROM m LEFT JOIN o USING (organisation_id, message_id)`.pipe(
              Effect.map((done) => new Map(done.map((d) => [d.key, { inserted: d.inserted, owedRow: d.owedRow }])))
            )
          )
        },
        received: (keys) =>
          fromDatabase(
            sql<{ key: string }>`SELECT s.organisation_id::text || '/' || s.message_id::text AS key
          FROM simulator_messages AS s
          JOIN json_to_recordset(${keysJson(keys)}::json) AS x(organisation_id uuid, message_id uuid)
            ON s.organisation_id = x.organisation_id AND s.message_id = x.message_id`.pipe(
              Effect.map((found) => new Set(found.map((f) => f.key)))
            )
          ),
        oweReceipt: (organisationId, messageId, at) =>
          fromDatabase(
            sql`WITH u AS (
            UPDATE simulator_messages SET receipt_at = ${at}
            WHERE organisation_id = ${organisationId} AND message_id = ${messageId} AND receipt <> 'none' AND receipt_at IS NULL
            RETURNING organisation_id, message_id)
          INSERT INTO simulator_receipts_owed (organisation_id, message_id, due_at) SELECT organisation_id, message_id, ${at} FROM u
          RETURNING message_id`.pipe(Effect.map((rows) => rows.length > 0))
          ),
        claimDue: (at, resendAt, limit) =>
          // the set is picked once (an initplan) and its rows updated where they lie (a TID scan; the
          // lock keeps them in place), planned at each run (replanned): joined as a subquery under a
          // plan cached while the table was empty, it ran again for every row of the table
          fromDatabase(
            replanned(sql<DueReceipt>`UPDATE simulator_receipts_owed AS o SET due_at = ${resendAt}
          FROM simulator_messages AS s
          WHERE o.ctid = ANY(ARRAY(SELECT ctid FROM simulator_receipts_owed
              WHERE due_at <= ${at} ORDER BY due_at LIMIT ${limit}
              FOR UPDATE SKIP LOCKED))
            AND s.organisation_id = o.organisation_id AND s.message_id = o.message_id
          RETURNING o.ctid::text AS row_at, o.organisation_id::text, o.message_id::text, s.receipt, s.receipt_at`)
          ),
        sent: (receipts) =>
          receipts.length === 0
            ? Effect.void
            : // replanned, as every statement over this queue: a plan cached while it was empty
              // scanned it whole, its dead rows included, at every call (quadratic in a drain)
              fromDatabase(
                replanned(sql`DELETE FROM simulator_receipts_owed
              WHERE ctid = ANY(${receipts.map((r) => r.rowAt)}::tid[]) AND message_id = ANY(${receipts.map((r) => r.messageId)}::uuid[])`).pipe(
                  Effect.asVoid
                )
              ),
        nextDue: (from) =>
          fromDatabase(
            replanned(sql<{ at: Date | null }>`SELECT min(due_at) AS at FROM simulator_receipts_owed
          WHERE due_at >= ${from ?? "-infinity"}::timestamptz`).pipe(Effect.map(([row]) => row?.at ?? undefined))
          ),
        dropReceipted: (before, limit) =>
          // the owed receipts are few (those not yet taken): read whole, not looked up per row
          fromDatabase(
            sql<{ n: number }>`WITH gone AS (
            DELETE FROM simulator_messages WHERE ctid = ANY(ARRAY(SELECT s.ctid FROM simulator_messages AS s
              WHERE s.receipt_at < ${before}
                AND NOT EXISTS (SELECT 1 FROM simulator_receipts_owed AS o WHERE o.organisation_id = s.organisation_id AND o.message_id = s.message_id)
              ORDER BY s.receipt_at LIMIT ${limit} FOR UPDATE OF s SKIP LOCKED))
            RETURNING message_id)
          SELECT count(*)::integer AS n FROM gone`.pipe(Effect.map((rows) => rows[0]?.n ?? 0))
          ),
        forceReceipt: (organisationId, messageId, outcome, at) =>
          fromDatabase(
            sql`WITH u AS (
            UPDATE simulator_messages SET receipt = ${outcome}, receipt_at = ${at}
            WHERE organisation_id = ${organisationId} AND message_id = ${messageId}
            RETURNING organisation_id, message_id),
          replaced AS (
            DELETE FROM simulator_receipts_owed AS o USING u WHERE o.organisation_id = u.organisation_id AND o.message_id = u.message_id)
          INSERT INTO simulator_receipts_owed (organisation_id, message_id, due_at) SELECT organisation_id, message_id, ${at} FROM u
          RETURNING message_id`.pipe(Effect.map((rows) => rows.length > 0))
          )
      })
    })
  )
}
