/**
 * The credit tables (contract section 3), owned here: `credit_lots` (a grant each, with the
 * counters of what is reserved and consumed), `credit_holds` (the part of one message's
 * reservation drawn from one lot: pending, then posted or voided) and `credit_entries` (the
 * journal that explains every change of a lot's counters). A lot's counters never change without
 * the entry that explains it. Expiry is judged against the day the caller gives.
 *
 * The one-statement admission (messages/QuickAdmission.ts) is composed from the fragments at the
 * end: the first valid lot with free credits, and the reservation from it.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Store.ts"
import type { LotFree } from "../domain/Credits.ts"

/** Every credit of an organisation in exactly one bucket: granted = consumed + reserved + available + expiredUnreserved. */
export interface LedgerTotals {
  readonly granted: number
  readonly consumed: number
  readonly reserved: number
  readonly available: number
  readonly expiredUnreserved: number
  /** The earliest `valid_until` among valid lots with available credits (null when none expires). */
  readonly validUntil: string | null
}

/** Credits of one lot held for one message. */
export interface Hold {
  readonly messageId: string
  readonly lotId: string
  readonly amount: number
}

/** The end of one message's reservation: its credits spent (`consume`) or returned to their lots (`release`). */
export interface HoldSettlement {
  readonly organisationId: string
  readonly messageId: string
  readonly kind: "consume" | "release"
}

type Fails<A> = Effect.Effect<A, DatabaseUnavailable>

// Stryker disable StringLiteral: the service's key ("sms/LedgerStore" below) is unique whatever its text
export class LedgerStore extends Context.Service<LedgerStore, {
  /** Adds a lot of `amount` credits valid through `validUntil` (null = never expires), with its grant entry. */
  readonly grant: (organisationId: string, amount: number, validUntil: string | null, at: Date) => Fails<void>
  /** Locks the organisation's lots valid on `today` with free credits, in the order they are drawn from (earliest expiry first). */
  readonly lockFreeLots: (organisationId: string, today: string) => Fails<ReadonlyArray<LotFree>>
  /** Writes pending holds with their reserve entries and adds them to their lots' reserved counters, in one statement. */
  readonly hold: (organisationId: string, holds: ReadonlyArray<Hold>, at: Date) => Fails<void>
  /** Posts or voids the pending holds of a set of messages, in one statement, each lot touched once. */
  readonly settle: (settlements: ReadonlyArray<HoldSettlement>, at: Date) => Fails<void>
  /** Every bucket of the ledger invariant as of `today`. */
  readonly totals: (organisationId: string, today: string) => Fails<LedgerTotals>
  /** Credits reserved by messages not yet settled, every organisation together (for /metrics). */
  readonly reservedEverywhere: Fails<number>
}>()("sms/LedgerStore") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(LedgerStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    return LedgerStore.of({
      grant: (organisationId, amount, validUntil, at) =>
        fromDatabase(sql`WITH lot AS (
            INSERT INTO credit_lots (organisation_id, amount, valid_until, created_at)
            VALUES (${organisationId}, ${amount}, ${validUntil}::date, ${at})
            RETURNING organisation_id, id, amount)
          INSERT INTO credit_entries (organisation_id, lot_id, kind, amount, at)
          SELECT organisation_id, id, 'grant', amount, ${at} FROM lot`.pipe(Effect.asVoid)),
      lockFreeLots: (organisationId, today) =>
        fromDatabase(sql<LotFree>`SELECT id::text AS id, (amount - reserved - consumed) AS free
          FROM credit_lots
          WHERE organisation_id = ${organisationId}
            AND (valid_until IS NULL OR valid_until >= ${today}::date)
            AND amount - reserved - consumed > 0
          ORDER BY valid_until ASC NULLS LAST, credit_lots.id ASC
          FOR UPDATE`),
      hold: (organisationId, holds, at) => {
        // Stryker disable next-line ConditionalExpression: equivalent, no hold inserts and updates no row; the return saves the statement
        if (holds.length === 0) return Effect.void
        const rows = holds.map((h) => ({ organisation_id: organisationId, message_id: h.messageId, lot_id: h.lotId, amount: h.amount }))
        return fromDatabase(sql`WITH h AS (
            INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
            SELECT organisation_id, message_id, lot_id, amount, 'pending', ${at}
            FROM json_to_recordset(${JSON.stringify(rows)}::json)
              AS x(organisation_id uuid, message_id uuid, lot_id bigint, amount integer)
            RETURNING organisation_id, message_id, lot_id, amount),
          e AS (
            INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
            SELECT organisation_id, lot_id, message_id, 'reserve', amount, ${at} FROM h)
          UPDATE credit_lots AS l SET reserved = l.reserved + t.amount
          FROM (SELECT lot_id, sum(amount)::integer AS amount FROM h GROUP BY lot_id) AS t
          WHERE l.organisation_id = ${organisationId} AND l.id = t.lot_id`.pipe(Effect.asVoid))
      },
      settle: (settlements, at) => {
        // Stryker disable next-line ConditionalExpression: equivalent, an empty set updates no row; the return saves the statement
        if (settlements.length === 0) return Effect.void
        const rows = settlements.map((x) => ({ organisation_id: x.organisationId, message_id: x.messageId, kind: x.kind }))
        return fromDatabase(sql`WITH x AS (
            SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(organisation_id uuid, message_id uuid, kind text)),
          h AS (
            UPDATE credit_holds AS ch SET state = CASE x.kind WHEN 'consume' THEN 'posted' ELSE 'voided' END, settled_at = ${at}
            FROM x
            WHERE ch.organisation_id = x.organisation_id AND ch.message_id = x.message_id AND ch.state = 'pending'
            RETURNING ch.organisation_id, ch.message_id, ch.lot_id, ch.amount, x.kind),
          e AS (
            INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
            SELECT organisation_id, lot_id, message_id, kind, amount, ${at} FROM h)
          UPDATE credit_lots AS l
          SET reserved = l.reserved - t.amount, consumed = l.consumed + t.consumed
          FROM (SELECT organisation_id, lot_id, sum(amount)::integer AS amount,
              coalesce(sum(amount) FILTER (WHERE kind = 'consume'), 0)::integer AS consumed
            FROM h GROUP BY organisation_id, lot_id) AS t
          WHERE l.organisation_id = t.organisation_id AND l.id = t.lot_id`.pipe(Effect.asVoid))
      },
      // float8, not integer: an organisation's lots may hold more than 2^31 - 1 credits in all (each
      // at most 10^9), and float8 counts exactly up to 2^53
      totals: (organisationId, today) =>
        fromDatabase(sql<LedgerTotals>`SELECT
            coalesce(sum(amount), 0)::float8 AS granted,
            coalesce(sum(consumed), 0)::float8 AS consumed,
            coalesce(sum(reserved), 0)::float8 AS reserved,
            coalesce(sum(amount - reserved - consumed) FILTER (WHERE valid_until IS NULL OR valid_until >= ${today}::date), 0)::float8 AS available,
            coalesce(sum(amount - reserved - consumed) FILTER (WHERE valid_until < ${today}::date), 0)::float8 AS expired_unreserved,
            (min(valid_until) FILTER (WHERE valid_until >= ${today}::date AND amount - reserved - consumed > 0))::text AS valid_until
          FROM credit_lots WHERE organisation_id = ${organisationId}`.pipe(Effect.map((rows) => rows[0]!))),
      reservedEverywhere: fromDatabase(sql<{ reserved: number }>`SELECT coalesce(sum(reserved), 0)::float8 AS reserved FROM credit_lots`
        .pipe(Effect.map((rows) => rows[0]!.reserved)))
    })
  }))
}

/**
 * Fragments of the one-statement admission. `firstLot(...)` is the CTE `lot`: the first lot
 * valid on `today` with free credits, read with its current counters and locked, so a concurrent
 * admission cannot take its credits between the statement's read and its reservation.
 */
export const ledgerFragments = (sql: SqlClient.SqlClient) => ({
  firstLot: (organisationId: string, today: string) =>
    sql`lot AS (
      SELECT id, amount - reserved - consumed AS free FROM credit_lots
      WHERE organisation_id = ${organisationId} AND (valid_until IS NULL OR valid_until >= ${today}::date)
        AND amount - reserved - consumed > 0
      ORDER BY valid_until ASC NULLS LAST, id ASC LIMIT 1
      FOR UPDATE)`,
  /** Whether `lot` covers `credits`. */
  lotCovers: (credits: number) => sql`EXISTS (SELECT 1 FROM lot WHERE lot.free >= ${credits})`,
  /**
   * The CTEs `r` (the lot's reserved counter raised by `credits` once `claimed` has a row), `h`
   * (a pending hold per member of `members`) and `ce` (their reserve entries).
   */
  reserveFromLot: (organisationId: string, credits: number, perMessage: number, claimed: string, members: string, at: Date) =>
    sql`r AS (
        UPDATE credit_lots AS l SET reserved = l.reserved + ${credits}
        FROM lot
        WHERE l.organisation_id = ${organisationId} AND l.id = lot.id AND EXISTS (SELECT 1 FROM ${sql(claimed)})
        RETURNING l.id),
      h AS (
        INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
        SELECT ${organisationId}, m.id, r.id, ${perMessage}, 'pending', ${at} FROM r, ${sql(members)} AS m),
      ce AS (
        INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
        SELECT ${organisationId}, r.id, m.id, 'reserve', ${perMessage}, ${at} FROM r, ${sql(members)} AS m)`
})
