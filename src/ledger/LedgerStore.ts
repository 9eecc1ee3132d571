/**
 * The credit tables (docs/decisions.md#credits), owned here: `credit_lots` (a grant, or a part of a
 * large one, with the counters of what is reserved and consumed), `credit_holds` (the part of one
 * message's reservation drawn from one lot, while it is pending: settlement removes it, its
 * consume or release entry saying what became of it), `credit_entries` (the journal that
 * explains every change of a lot's counters, partitioned by UTC month of its entries) and
 * `credit_entry_totals` (what folded entries said, per fold, lot, month and kind). A lot's counters
 * never change without the entry that explains it, and always equal its entries plus its totals.
 * Expiry is judged against the day the caller gives.
 *
 * Retention empties the journal: the entries of an erased message are folded into the totals
 * (`foldMessageEntries`, with its erasure), and a month's partition that holds no message's entry
 * any more is dropped in one statement, its grants folded first (`dropEmptyPartitions`).
 * Partitions are created months ahead (`preparePartitions`).
 *
 * The one-statement admission (messages/QuickAdmission.ts) is composed from the fragments at the
 * end: the first valid lot with free credits, and the reservation from it.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import { dropPartitionLocked, makePartitions, pastPartitions } from "../db/MonthPartitions.ts"
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

/**
 * The journal's monthly partitions are named `credit_entries_pYYYYMM` (migration 16,
 * `sms_month_partition`); `credit_entries_default` takes what falls in a month without one.
 */
const partitionPrefix = "credit_entries_p"

/**
 * The folded entries (a CTE `gone` of `organisation_id, lot_id, kind, amount, at`) as totals rows,
 * per lot, UTC month and kind; inserted, never updated, so that two folds never wait on one row.
 */
const addToTotals = (sql: SqlClient.SqlClient, foldedAt: Date) =>
  sql`INSERT INTO credit_entry_totals (organisation_id, lot_id, month, kind, amount, entries, folded_at)
    SELECT organisation_id, lot_id, date_trunc('month', at AT TIME ZONE 'UTC')::date, kind, sum(amount), count(*), ${foldedAt}
    FROM gone GROUP BY 1, 2, 3, 4`

/** The lots `lots` (a table alias) of the organisation that are valid on `today`. */
const validLots = (sql: SqlClient.SqlClient, lots: string, organisationId: string, today: string) =>
  sql`${sql(lots)}.organisation_id = ${organisationId}
    AND (${sql(lots)}.valid_until IS NULL OR ${sql(lots)}.valid_until >= ${today}::date)`

// Stryker disable StringLiteral: the service's key ("sms/LedgerStore" below) is unique whatever its text
export class LedgerStore extends Context.Service<
  LedgerStore,
  {
    /**
     * Adds `amount` credits valid through `validUntil` (null = never expires) as the lots of
     * `splitGrant`, each with its grant entry.
     */
    readonly grant: (organisationId: string, amount: number, validUntil: string | null, at: Date) => Fails<void>
    /** Locks the organisation's lots valid on `today` with free credits, in the order they are drawn from (earliest expiry first). */
    readonly lockFreeLots: (organisationId: string, today: string) => Fails<ReadonlyArray<LotFree>>
    /** Writes pending holds with their reserve entries and adds them to their lots' reserved counters, in one statement. */
    readonly hold: (organisationId: string, holds: ReadonlyArray<Hold>, at: Date) => Fails<void>
    /**
     * Settles the pending holds of a set of messages in one statement, each lot touched once: each
     * hold is removed and its consume or release entry written (posted or voided, in two-phase
     * terms: the entries keep what the hold said).
     */
    readonly settle: (settlements: ReadonlyArray<HoldSettlement>, at: Date) => Fails<void>
    /** Every bucket of the ledger invariant as of `today`. */
    readonly totals: (organisationId: string, today: string) => Fails<LedgerTotals>
    /** Credits reserved by messages not yet settled, every organisation together (for /metrics). */
    readonly reservedEverywhere: Fails<number>
    /**
     * Folds the entries of these messages (erased: settled, their detail no longer kept) into the
     * per-lot monthly totals, in one statement, in the caller's transaction; returns how many entries.
     */
    readonly foldMessageEntries: (
      messages: ReadonlyArray<{ readonly organisationId: string; readonly id: string }>,
      at: Date
    ) => Fails<number>
    /**
     * Creates the journal's partitions of the month of `at` and the `monthsAhead` next ones, those
     * missing; false, with none made, when a lock was not had within `partitionLockMs`.
     */
    readonly preparePartitions: (at: Date, monthsAhead: number) => Fails<boolean>
    /**
     * Drops the journal's partitions of the months before the month of `at` that hold no entry of a
     * message any more, each in a transaction of its own that locks the journal (within
     * `partitionLockMs`, else the partition is left for the next time), looks again, then folds the
     * partition's grant entries into the totals. Returns the months dropped (YYYYMM).
     */
    readonly dropEmptyPartitions: (at: Date) => Fails<ReadonlyArray<string>>
  }
>()("sms/LedgerStore") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(
    LedgerStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient

      return LedgerStore.of({
        grant: (organisationId, amount, validUntil, at) =>
          fromDatabase(
            sql`WITH lot AS (
            INSERT INTO credit_lots (organisation_id, amount, valid_until, created_at)
            SELECT ${organisationId}, a.amount, ${validUntil}::date, ${at}
            FROM unnest(${`{${splitGrant(amount).join(",")}}`}::integer[]) WITH ORDINALITY AS a(amount, n)
            ORDER BY a.n
            RETURNING organisation_id, id, amount)
          INSERT INTO credit_entries (organisation_id, lot_id, kind, amount, at)
          SELECT organisation_id, id, 'grant', amount, ${at} FROM lot`.pipe(Effect.asVoid)
          ),
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
          const rows = holds.map((h) => ({
            organisation_id: organisationId,
            message_id: h.messageId,
            lot_id: h.lotId,
            amount: h.amount
          }))
          return fromDatabase(
            sql`WITH h AS (
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
          WHERE l.organisation_id = ${organisationId} AND l.id = t.lot_id`.pipe(Effect.asVoid)
          )
        },
        settle: (settlements, at) => {
          // Stryker disable next-line ConditionalExpression: equivalent, an empty set updates no row; the return saves the statement
          if (settlements.length === 0) return Effect.void
          const rows = settlements.map((x) => ({
            organisation_id: x.organisationId,
            message_id: x.messageId,
            kind: x.kind
          }))
          return fromDatabase(
            sql`WITH x AS (
            SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(organisation_id uuid, message_id uuid, kind text)),
          h AS (
            DELETE FROM credit_holds AS ch
            USING x
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
            AND (SELECT count(*) FROM locked) > 0`.pipe(Effect.asVoid)
          )
        },
        // float8, not integer: an organisation's lots may hold more than 2^31 - 1 credits in all (each
        // at most 10^9), and float8 counts exactly up to 2^53
        totals: (organisationId, today) =>
          fromDatabase(
            sql<LedgerTotals>`SELECT
            coalesce(sum(amount), 0)::float8 AS granted,
            coalesce(sum(consumed), 0)::float8 AS consumed,
            coalesce(sum(reserved), 0)::float8 AS reserved,
            coalesce(sum(amount - reserved - consumed) FILTER (WHERE valid_until IS NULL OR valid_until >= ${today}::date), 0)::float8 AS available,
            coalesce(sum(amount - reserved - consumed) FILTER (WHERE valid_until < ${today}::date), 0)::float8 AS expired_unreserved,
            (min(valid_until) FILTER (WHERE valid_until >= ${today}::date AND amount - reserved - consumed > 0))::text AS valid_until
          FROM credit_lots WHERE organisation_id = ${organisationId}`.pipe(Effect.map((rows) => rows[0]!))
          ),
        reservedEverywhere: fromDatabase(
          sql<{ reserved: number }>`SELECT coalesce(sum(reserved), 0)::float8 AS reserved FROM credit_lots`.pipe(
            Effect.map((rows) => rows[0]!.reserved)
          )
        ),
        foldMessageEntries: (messages, at) => {
          // Stryker disable next-line ConditionalExpression: equivalent, an empty set folds no entry; the return saves the statement
          if (messages.length === 0) return Effect.succeed(0)
          const rows = JSON.stringify(messages.map((m) => ({ organisation_id: m.organisationId, message_id: m.id })))
          return fromDatabase(
            sql<{ n: number }>`WITH gone AS (
            DELETE FROM credit_entries AS e
            USING json_to_recordset(${rows}::json) AS x(organisation_id uuid, message_id uuid)
            WHERE e.organisation_id = x.organisation_id AND e.message_id = x.message_id
            RETURNING e.organisation_id, e.lot_id, e.kind, e.amount, e.at),
          totals AS (${addToTotals(sql, at)})
          SELECT count(*)::float8 AS n FROM gone`.pipe(Effect.map((r) => r[0]!.n))
          )
        },
        preparePartitions: (at, monthsAhead) =>
          fromDatabase(
            makePartitions(
              sql,
              sql`SELECT sms_month_partition('credit_entries',
              (date_trunc('month', ${at}::timestamptz AT TIME ZONE 'UTC') + make_interval(months => k))::date)
            FROM generate_series(0, ${monthsAhead}::integer) AS k`
            )
          ),
        dropEmptyPartitions: (at) =>
          Effect.gen(function* () {
            const dropped: Array<string> = []
            for (const name of yield* pastPartitions(sql, "credit_entries", partitionPrefix, at)) {
              const partition = sql(name)
              const holdsMessages = sql<{
                holds: boolean
              }>`SELECT EXISTS (SELECT 1 FROM ${partition} WHERE message_id IS NOT NULL) AS holds`.pipe(
                Effect.map((rows) => rows[0]!.holds)
              )
              // looked at without a lock first: most old partitions still hold messages (organisations that keep them)
              // Stryker disable next-line ConditionalExpression: equivalent, the same check is made again under the lock; this one saves taking it
              if (yield* holdsMessages) continue
              const done = yield* dropPartitionLocked(
                sql,
                "credit_entries",
                name,
                Effect.map(holdsMessages, (holds) => !holds),
                sql`WITH gone AS (SELECT organisation_id, lot_id, kind, amount, at FROM ${partition}) ${addToTotals(sql, at)}`.pipe(
                  Effect.asVoid
                )
              )
              if (done) dropped.push(name.slice(partitionPrefix.length))
            }
            return dropped
          }).pipe(fromDatabase)
      })
    })
  )
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
  reserveFromLot: (
    organisationId: string,
    credits: number,
    perMessage: number,
    claimed: string,
    members: string,
    at: Date
  ) =>
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
