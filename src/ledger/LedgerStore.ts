/**
 * The credit tables (contract section 3), owned here: `credit_lots` (a grant, or a part of a
 * large one, with the counters of what is reserved and consumed), `credit_holds` (the part of one
 * message's reservation drawn from one lot: pending, then posted or voided; a settled one is
 * removed when compaction collapses its message's timeline) and `credit_entries` (the journal
 * that explains every change of a lot's counters). A lot's counters never change without
 * the entry that explains it. Expiry is judged against the day the caller gives.
 *
 * The one-statement admission (messages/QuickAdmission.ts) is composed from the fragments at the
 * end: the first valid lot with free credits, and the reservation from it.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Store.ts"
import { type LotFree, splitGrant } from "../domain/Credits.ts"

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

/** The lots `lots` (a table alias) of the organisation that are valid on `today`. */
const validLots = (sql: SqlClient.SqlClient, lots: string, organisationId: string, today: string) =>
  sql`${sql(lots)}.organisation_id = ${organisationId}
    AND (${sql(lots)}.valid_until IS NULL OR ${sql(lots)}.valid_until >= ${today}::date)`

// Stryker disable StringLiteral: the service's key ("sms/LedgerStore" below) is unique whatever its text
export class LedgerStore extends Context.Service<LedgerStore, {
  /**
   * Adds `amount` credits valid through `validUntil` (null = never expires) as the lots of
   * `splitGrant`, each with its grant entry.
   */
  readonly grant: (organisationId: string, amount: number, validUntil: string | null, at: Date) => Fails<void>
  /** Locks the organisation's lots valid on `today` with free credits, in the order they are drawn from (earliest expiry first). */
  readonly lockFreeLots: (organisationId: string, today: string) => Fails<ReadonlyArray<LotFree>>
  /** Writes pending holds with their reserve entries and adds them to their lots' reserved counters, in one statement. */
  readonly hold: (organisationId: string, holds: ReadonlyArray<Hold>, at: Date) => Fails<void>
  /** Posts or voids the pending holds of a set of messages, in one statement, each lot touched once. */
  readonly settle: (settlements: ReadonlyArray<HoldSettlement>, at: Date) => Fails<void>
  /**
   * Removes the settled (posted or voided) holds of these messages, in one statement; returns how
   * many. The entries that explain them stay: each message's reserve entry and its consume or
   * release entry, per lot, say what its holds said. Pending holds are never touched.
   */
  readonly dropSettledHolds: (messages: ReadonlyArray<{ readonly organisationId: string; readonly id: string }>) => Fails<number>
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
            SELECT ${organisationId}, a.amount, ${validUntil}::date, ${at}
            FROM unnest(${`{${splitGrant(amount).join(",")}}`}::integer[]) WITH ORDINALITY AS a(amount, n)
            ORDER BY a.n
            RETURNING organisation_id, id, amount)
          INSERT INTO credit_entries (organisation_id, lot_id, kind, amount, at)
          SELECT organisation_id, id, 'grant', amount, ${at} FROM lot`.pipe(Effect.asVoid)),
      // locked in id order (as settle locks them), returned in drawing order; the order names the
      // bigint column (qualified), not the text one of the select list
      lockFreeLots: (organisationId, today) =>
        fromDatabase(sql<LotFree>`SELECT locked.id::text AS id, locked.free FROM (
            SELECT l.id, l.valid_until, (l.amount - l.reserved - l.consumed) AS free
            FROM credit_lots AS l
            WHERE ${validLots(sql, "l", organisationId, today)} AND l.amount - l.reserved - l.consumed > 0
            ORDER BY l.id
            FOR UPDATE) AS locked
          ORDER BY locked.valid_until ASC NULLS LAST, locked.id ASC`),
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
            SELECT organisation_id, lot_id, message_id, kind, amount, ${at} FROM h),
          -- the lots locked in id order first, as every statement that waits for lots locks them
          locked AS (
            SELECT l.organisation_id, l.id FROM credit_lots AS l
            WHERE (l.organisation_id, l.id) IN (SELECT organisation_id, lot_id FROM h)
            ORDER BY l.organisation_id, l.id
            FOR UPDATE)
          UPDATE credit_lots AS l
          SET reserved = l.reserved - t.amount, consumed = l.consumed + t.consumed
          FROM (SELECT organisation_id, lot_id, sum(amount)::integer AS amount,
              coalesce(sum(amount) FILTER (WHERE kind = 'consume'), 0)::integer AS consumed
            FROM h GROUP BY organisation_id, lot_id) AS t
          WHERE l.organisation_id = t.organisation_id AND l.id = t.lot_id
            -- read whole (an init plan) before the first row is updated: every lot is locked in order first
            AND (SELECT count(*) FROM locked) > 0`.pipe(Effect.asVoid))
      },
      dropSettledHolds: (messages) => {
        // Stryker disable next-line ConditionalExpression: equivalent, an empty set deletes no row; the return saves the statement
        if (messages.length === 0) return Effect.succeed(0)
        const rows = JSON.stringify(messages.map((m) => ({ organisation_id: m.organisationId, message_id: m.id })))
        return fromDatabase(sql<{ n: number }>`WITH gone AS (
            DELETE FROM credit_holds AS h
            USING json_to_recordset(${rows}::json) AS x(organisation_id uuid, message_id uuid)
            WHERE h.organisation_id = x.organisation_id AND h.message_id = x.message_id AND h.state <> 'pending'
            RETURNING 1)
          SELECT count(*)::float8 AS n FROM gone`.pipe(Effect.map((r) => r[0]!.n)))
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
 * Fragments of the one-statement admission. `lotFor(...)` is the CTEs `first_expiry` and `lot`:
 * one lot of the earliest validity that still has free credits, covering the whole reservation,
 * locked, so a concurrent admission cannot take its credits between the statement's read and its
 * reservation. A lot another statement holds is skipped (`splitGrant` gives a large grant many
 * lots of one validity, so concurrent admissions reserve from different rows); when every covering
 * lot is held, the admission is left to the general path.
 *
 * This statement never waits for a lot, so it is never part of a deadlock over lots; the
 * statements that do wait (`lockFreeLots`, `settle`) lock lots in one order, by id.
 */
export const ledgerFragments = (sql: SqlClient.SqlClient) => ({
  lotFor: (organisationId: string, today: string, credits: number) =>
    sql`first_expiry AS (
      SELECT e.valid_until FROM credit_lots AS e WHERE ${validLots(sql, "e", organisationId, today)} AND e.amount - e.reserved - e.consumed > 0
      ORDER BY e.valid_until ASC NULLS LAST LIMIT 1),
    lot AS (
      SELECT l.id, l.amount - l.reserved - l.consumed AS free FROM credit_lots AS l, first_expiry AS f
      WHERE ${validLots(sql, "l", organisationId, today)} AND l.amount - l.reserved - l.consumed >= ${credits}
        AND l.valid_until IS NOT DISTINCT FROM f.valid_until
      ORDER BY l.id LIMIT 1
      FOR UPDATE OF l SKIP LOCKED)`,
  /** Whether `lot` holds a lot covering the reservation. */
  lotCovers: sql`EXISTS (SELECT 1 FROM lot)`,
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
