/**
 * The in-process simulator's own memory (`simulator_messages`), owned here: what it received and
 * how many times, which receipt it owes and when, so that its outcomes hold across restarts and
 * processes, as a real provider's would.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "../../db/DatabaseUnavailable.ts"
import { fromDatabase, replanned } from "../../db/Store.ts"

export type ReceiptKind = "delivered" | "undeliverable" | "none"

/** One submission as the simulator records it. */
export interface ReceivedRow {
  readonly organisationId: string
  readonly messageId: string
  readonly providerRef: string
  readonly receipt: ReceiptKind
  /** When the receipt is owed; null when none is owed yet. */
  readonly receiptAt: Date | null
  /**
   * When a round may take the receipt (`claimDue`): its `receiptAt`, or later when the process
   * that received it sends it itself (the round then sends it only if that process did not).
   */
  readonly dueAt: Date | null
}

/** What recording a submission did: where its row lies, and whether it is new (not a message handed over again). */
export interface Recorded {
  readonly rowAt: string
  readonly inserted: boolean
}

/** A receipt owed and due. */
export interface DueReceipt {
  /** Where its row lay when claimed (`sent` finds it there, unless the row changed since). */
  readonly rowAt: string
  readonly providerRef: string
  readonly receipt: "delivered" | "undeliverable"
  readonly receiptAt: Date
}

type Fails<A> = Effect.Effect<A, DatabaseUnavailable>

export class SimulatorStore extends Context.Service<SimulatorStore, {
  /**
   * Records submissions (a message handed over again keeps its first receipt; only its count of
   * submissions grows); what it did, by `organisationId/messageId`.
   */
  readonly receive: (rows: ReadonlyArray<ReceivedRow>, at: Date) => Fails<ReadonlyMap<string, Recorded>>
  /** The provider ref of each message asked about, by `organisationId/messageId` (absent: never received). */
  readonly refsOf: (keys: ReadonlyArray<{ readonly organisationId: string; readonly messageId: string }>) => Fails<ReadonlyMap<string, string>>
  /** Owes the message's receipt at `at` unless it owes none or already owes it; whether it does now. */
  readonly oweReceipt: (organisationId: string, messageId: string, at: Date) => Fails<boolean>
  /** Claims up to `limit` receipts due at `at` until `resendAt` (sent again then unless confirmed). */
  readonly claimDue: (at: Date, resendAt: Date, limit: number) => Fails<ReadonlyArray<DueReceipt>>
  /**
   * These claimed receipts were stored by the service: owed no more. Each row is found where its
   * claim left it (a TID scan, no index); one changed since (submitted again, a receipt forced)
   * stays owed and is sent again at its resend time, a repeat the service ignores.
   */
  readonly sent: (receipts: ReadonlyArray<DueReceipt>) => Fails<void>
  /**
   * When the next receipt falls due, from `from` on (null: the earliest owed, overdue included).
   * A round that claimed everything due by its time looks from that time on: the index's entries
   * before it are those of receipts already taken, dead rows a scan from the start reads through
   * (thousands of pages a call in a drain, until a vacuum).
   */
  readonly nextDue: (from: Date | null) => Fails<Date | undefined>
  /** Owes `outcome` now for a message it received, whatever it owed; false when it never received it. */
  readonly forceReceipt: (organisationId: string, messageId: string, outcome: "delivered" | "undeliverable", at: Date) => Fails<boolean>
  /** Forgets at most `limit` messages whose receipt was sent (and taken) before `before`; returns how many. */
  readonly dropReceipted: (before: Date, limit: number) => Fails<number>
}>()("sms/SimulatorStore") {
  static readonly layer = Layer.effect(SimulatorStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return SimulatorStore.of({
      receive: (received, at) => {
        const rows = received.map((r) => ({
          organisation_id: r.organisationId,
          message_id: r.messageId,
          provider_ref: r.providerRef,
          receipt: r.receipt,
          receipt_at: r.receiptAt?.toISOString() ?? null,
          due_at: r.dueAt?.toISOString() ?? null
        }))
        // a new row has no xmax; one updated by ON CONFLICT has its updater's
        return fromDatabase(sql<{ key: string; rowAt: string; inserted: boolean }>`INSERT INTO simulator_messages (organisation_id, message_id,
            provider_ref, receipt, receipt_at, receipt_due_at, received_at, submissions)
          SELECT organisation_id, message_id, min(provider_ref), min(receipt), min(receipt_at), min(due_at), ${at}, count(*)
          FROM json_to_recordset(${JSON.stringify(rows)}::json)
            AS x(organisation_id uuid, message_id uuid, provider_ref text, receipt text, receipt_at timestamptz, due_at timestamptz)
          GROUP BY organisation_id, message_id
          ON CONFLICT (organisation_id, message_id) DO UPDATE SET submissions = simulator_messages.submissions + EXCLUDED.submissions
          RETURNING organisation_id::text || '/' || message_id::text AS key, ctid::text AS row_at, xmax = 0 AS inserted`
          .pipe(Effect.map((done) => new Map(done.map((d) => [d.key, { rowAt: d.rowAt, inserted: d.inserted }])))))
      },
      refsOf: (keys) =>
        fromDatabase(sql<{ organisationId: string; messageId: string; providerRef: string }>`SELECT
            s.organisation_id::text, s.message_id::text, s.provider_ref
          FROM simulator_messages AS s
          JOIN json_to_recordset(${JSON.stringify(keys.map((k) => ({ organisation_id: k.organisationId, message_id: k.messageId })))}::json)
            AS x(organisation_id uuid, message_id uuid)
            ON s.organisation_id = x.organisation_id AND s.message_id = x.message_id`.pipe(
          Effect.map((found) => new Map(found.map((f) => [`${f.organisationId}/${f.messageId}`, f.providerRef])))
        )),
      oweReceipt: (organisationId, messageId, at) =>
        fromDatabase(sql`UPDATE simulator_messages SET receipt_at = ${at}, receipt_due_at = ${at}
          WHERE organisation_id = ${organisationId} AND message_id = ${messageId}
            AND receipt <> 'none' AND receipt_at IS NULL RETURNING message_id`.pipe(Effect.map((rows) => rows.length > 0))),
      claimDue: (at, resendAt, limit) =>
        // the set is picked once (an initplan) and its rows updated where they lie (a TID scan; the
        // lock keeps them in place), planned at each run (replanned): joined as a subquery under a
        // plan cached while the table was empty, it ran again for every row of the table
        fromDatabase(replanned(sql<DueReceipt>`UPDATE simulator_messages SET receipt_due_at = ${resendAt}
          WHERE ctid = ANY(ARRAY(SELECT ctid FROM simulator_messages
            WHERE receipt_due_at <= ${at} ORDER BY receipt_due_at LIMIT ${limit}
            FOR UPDATE SKIP LOCKED))
          RETURNING ctid::text AS row_at, provider_ref, receipt, receipt_at`)),
      sent: (receipts) =>
        receipts.length === 0
          ? Effect.void
          : fromDatabase(sql`UPDATE simulator_messages SET receipt_due_at = NULL
              WHERE ctid = ANY(${receipts.map((r) => r.rowAt)}::tid[]) AND provider_ref = ANY(${receipts.map((r) => r.providerRef)}::text[])`
            .pipe(Effect.asVoid)),
      nextDue: (from) =>
        fromDatabase(sql<{ at: Date | null }>`SELECT min(receipt_due_at) AS at FROM simulator_messages
          WHERE receipt_due_at >= ${from ?? "-infinity"}::timestamptz`.pipe(Effect.map(([row]) => row?.at ?? undefined))),
      dropReceipted: (before, limit) =>
        fromDatabase(sql<{ n: number }>`WITH gone AS (
            DELETE FROM simulator_messages WHERE ctid = ANY(ARRAY(SELECT ctid FROM simulator_messages
              WHERE receipt_due_at IS NULL AND receipt_at < ${before} ORDER BY receipt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED))
            RETURNING provider_ref)
          SELECT count(*)::integer AS n FROM gone`.pipe(Effect.map((rows) => rows[0]?.n ?? 0))),
      forceReceipt: (organisationId, messageId, outcome, at) =>
        fromDatabase(sql`UPDATE simulator_messages SET receipt = ${outcome}, receipt_at = ${at}, receipt_due_at = ${at}
          WHERE organisation_id = ${organisationId} AND message_id = ${messageId} RETURNING message_id`.pipe(Effect.map((rows) => rows.length > 0)))
    })
  }))
}
