/**
 * The credit ledger (contract section 3), in the style of two-phase transfers: a grant is a lot;
 * admission reserves (pending) credits from valid lots, earliest expiry first; the provider's
 * answer consumes (posts) or releases (voids) them. Every change to a lot's counters is written
 * together with the `credit_entries` row that explains it. Expiry is judged with the Clock.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { allocate, type LotFree } from "../domain/Credits.ts"
import { InsufficientCredits } from "../domain/Errors.ts"
import { now, today } from "../Time.ts"

export interface BalanceView {
  readonly total: number
  readonly reserved: number
  readonly available: number
  readonly validUntil: string | null
}

/** Every credit of an organisation in exactly one bucket: granted = consumed + reserved + available + expiredUnreserved. */
export interface LedgerTotals {
  readonly granted: number
  readonly consumed: number
  readonly reserved: number
  readonly available: number
  readonly expiredUnreserved: number
}

export interface Reservation {
  readonly messageId: string
  readonly credits: number
}

/** The end of one message's reservation: its credits spent (`consume`) or returned to their lots (`release`). */
export interface HoldSettlement {
  readonly organisationId: string
  readonly messageId: string
  readonly kind: "consume" | "release"
}

// Stryker disable StringLiteral: the service's key ("sms/Ledger" below) is unique whatever its text
export class Ledger extends Context.Service<Ledger, {
  /** Adds a lot of `amount` credits valid through `validUntil` (inclusive UTC date; null = never expires). */
  readonly grant: (organisationId: string, amount: number, validUntil: string | null) => Effect.Effect<void, SqlError.SqlError>
  /** Reserves each message's credits from valid lots, all or nothing; fails InsufficientCredits. Atomic with the caller's transaction. */
  readonly reserve: (organisationId: string, reservations: ReadonlyArray<Reservation>) => Effect.Effect<void, InsufficientCredits | SqlError.SqlError>
  /**
   * Posts (consume) or voids (release) the pending reservations of a set of messages in one
   * statement, touching each lot once; a message with nothing pending is left alone.
   */
  readonly settle: (settlements: ReadonlyArray<HoldSettlement>) => Effect.Effect<void, SqlError.SqlError>
  /** Posts a message's pending reservation: its credits are spent. A no-op when nothing is pending. */
  readonly consume: (organisationId: string, messageId: string) => Effect.Effect<void, SqlError.SqlError>
  /** Voids a message's pending reservation: its credits return to their lots. A no-op when nothing is pending. */
  readonly release: (organisationId: string, messageId: string) => Effect.Effect<void, SqlError.SqlError>
  /** The balance of spec 2.7, as of the Clock's today. */
  readonly balance: (organisationId: string) => Effect.Effect<BalanceView, SqlError.SqlError>
  /** Every bucket of the ledger invariant, as of the Clock's today. */
  readonly totals: (organisationId: string) => Effect.Effect<LedgerTotals, SqlError.SqlError>
}>()("sms/Ledger") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(Ledger, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
    const grant = Effect.fn("Ledger.grant")(function*(organisationId: string, amount: number, validUntil: string | null) {
      const at = yield* now
      yield* sql`WITH lot AS (
          INSERT INTO credit_lots (organisation_id, amount, valid_until, created_at)
          VALUES (${organisationId}, ${amount}, ${validUntil}::date, ${at})
          RETURNING organisation_id, id, amount)
        INSERT INTO credit_entries (organisation_id, lot_id, kind, amount, at)
        SELECT organisation_id, id, 'grant', amount, ${at} FROM lot`
    })

    // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
    const reserve = Effect.fn("Ledger.reserve")(function*(organisationId: string, reservations: ReadonlyArray<Reservation>) {
      const needed = reservations.reduce((sum, r) => sum + r.credits, 0)
      // Stryker disable next-line ConditionalExpression: equivalent, nothing to reserve then inserts and updates no row; the return saves the statements
      if (needed === 0) return
      const [day, at] = [yield* today, yield* now]
      // Lock the lots that can fund the reservation, in the order they are drawn from.
      const lots = yield* sql<LotFree>`SELECT id::text AS id, (amount - reserved - consumed) AS free
        FROM credit_lots
        WHERE organisation_id = ${organisationId}
          AND (valid_until IS NULL OR valid_until >= ${day}::date)
          AND amount - reserved - consumed > 0
        ORDER BY valid_until ASC NULLS LAST, credit_lots.id ASC
        FOR UPDATE`
      const holds = allocate(lots, reservations)
      if (holds === undefined) {
        const available = lots.reduce((sum, l) => sum + l.free, 0)
        return yield* InsufficientCredits.withMessage(
          `Not enough valid credits: ${needed} needed, ${available} available`
        )
      }
      const rows = holds.map((h) => ({ organisation_id: organisationId, message_id: h.messageId, lot_id: h.lotId, amount: h.amount }))
      yield* sql`WITH h AS (
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
        WHERE l.organisation_id = ${organisationId} AND l.id = t.lot_id`
    })

    // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
    const settle = Effect.fn("Ledger.settle")(function*(settlements: ReadonlyArray<HoldSettlement>) {
      // Stryker disable next-line ConditionalExpression: equivalent, an empty set updates no row; the return saves the statement
      if (settlements.length === 0) return
      const at = yield* now
      const rows = settlements.map((x) => ({ organisation_id: x.organisationId, message_id: x.messageId, kind: x.kind }))
      yield* sql`WITH x AS (
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
        WHERE l.organisation_id = t.organisation_id AND l.id = t.lot_id`
    })

    // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
    const totals = Effect.fn("Ledger.totals")(function*(organisationId: string) {
      const day = yield* today
      // float8, not integer: an organisation's lots may hold more than 2^31 - 1 credits in all (each
      // at most 10^9), and float8 counts exactly up to 2^53
      const [row] = yield* sql<LedgerTotals & { validUntil: string | null }>`SELECT
          coalesce(sum(amount), 0)::float8 AS granted,
          coalesce(sum(consumed), 0)::float8 AS consumed,
          coalesce(sum(reserved), 0)::float8 AS reserved,
          coalesce(sum(amount - reserved - consumed) FILTER (WHERE valid_until IS NULL OR valid_until >= ${day}::date), 0)::float8 AS available,
          coalesce(sum(amount - reserved - consumed) FILTER (WHERE valid_until < ${day}::date), 0)::float8 AS expired_unreserved,
          (min(valid_until) FILTER (WHERE valid_until >= ${day}::date AND amount - reserved - consumed > 0))::text AS valid_until
        FROM credit_lots WHERE organisation_id = ${organisationId}`
      return row!
    })

    return Ledger.of({
      grant,
      reserve,
      settle,
      consume: (organisationId, messageId) => settle([{ organisationId, messageId, kind: "consume" }]),
      release: (organisationId, messageId) => settle([{ organisationId, messageId, kind: "release" }]),
      totals: (organisationId) => totals(organisationId).pipe(Effect.map(({ validUntil: _, ...t }) => t)),
      balance: (organisationId) =>
        totals(organisationId).pipe(Effect.map((t) => ({
          total: t.available + t.reserved,
          reserved: t.reserved,
          available: t.available,
          validUntil: t.validUntil
        })))
    })
  }))
}
