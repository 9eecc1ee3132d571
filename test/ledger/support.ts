/**
 * One database for a test file (the embedded PGlite in memory, or the PostgreSQL of
 * DATABASE_URL), with the service's own composition over it (the Ledger, Organisations...).
 * Tests isolate themselves by creating a fresh organisation each.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Organisations } from "../../src/organisations/Organisations.ts"
import { appServices } from "../support/AppServices.ts"

export { backend } from "../support/TestApp.ts"

/** The instant every test starts at: 2026-01-10T12:00:00Z. */
export const start = Date.UTC(2026, 0, 10, 12, 0, 0)

export const LedgerTestLayer = appServices()

/** A new organisation; returns its id. */
export const newOrganisation = Effect.gen(function* () {
  const orgs = yield* Organisations
  const org = yield* orgs.create("Ledger test org", "TESTORG")
  return org.id
})

export interface LotRow {
  readonly amount: number
  readonly validUntil: string | null
  readonly reserved: number
  readonly consumed: number
}

/** The organisation's lots in grant order (straight from the table, for whitebox checks). */
export const lotRows = (organisationId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<LotRow>`SELECT amount, valid_until::text AS valid_until, reserved, consumed
      FROM credit_lots WHERE organisation_id = ${organisationId} ORDER BY id`
  })

export interface HoldRow {
  readonly messageId: string
  /** 0-based grant order of the lot. */
  readonly lotSeq: number
  /** The lot's valid_until. */
  readonly validUntil: string | null
  readonly amount: number
  readonly state: string
}

/** SQL column naming the lot of the row `alias` by its grant order (`lot_seq`, from 0). */
const lotSeq = (alias: string) =>
  `(SELECT count(*) FROM credit_lots l WHERE l.organisation_id = ${alias}.organisation_id AND l.id < ${alias}.lot_id)::integer AS lot_seq`

/** SQL columns naming the lot of the row `alias` by its grant order (`lot_seq`) and giving its `valid_until`. */
const lotColumns = (alias: string) =>
  `${lotSeq(alias)},
  (SELECT l.valid_until::text FROM credit_lots l WHERE l.organisation_id = ${alias}.organisation_id AND l.id = ${alias}.lot_id) AS valid_until`

/** Every hold of the organisation, with its lot named by grant order, sorted by message then lot. */
export const holdRows = (organisationId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<HoldRow>`SELECT h.message_id::text AS message_id, ${sql.literal(lotColumns("h"))}, h.amount, h.state
      FROM credit_holds h WHERE h.organisation_id = ${organisationId}
      ORDER BY h.message_id, h.lot_id`
  })

export interface SettlementEntryRow extends Omit<HoldRow, "state"> {
  readonly kind: "consume" | "release"
}

/** The organisation's consume and release entries (what each settled hold was), by message and lot. */
export const settlementEntries = (organisationId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<SettlementEntryRow>`SELECT e.message_id::text AS message_id, ${sql.literal(lotColumns("e"))}, e.kind, e.amount
      FROM credit_entries e WHERE e.organisation_id = ${organisationId} AND e.kind IN ('consume', 'release')
      ORDER BY e.message_id, e.lot_id, e.kind`
  })

export interface EntryCheckRow {
  readonly lotSeq: number
  readonly amount: number
  readonly reserved: number
  readonly consumed: number
  readonly granted: number
  readonly netReserved: number
  readonly consumedEntries: number
}

/** Per lot, its counters next to what its journal adds up to: its credit_entries and the totals folded from them. */
export const entrySums = (organisationId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<EntryCheckRow>`SELECT
        (row_number() OVER (ORDER BY l.id) - 1)::integer AS lot_seq,
        l.amount, l.reserved, l.consumed,
        coalesce(sum(e.amount) FILTER (WHERE e.kind = 'grant'), 0)::integer AS granted,
        (coalesce(sum(e.amount) FILTER (WHERE e.kind = 'reserve'), 0)
          - coalesce(sum(e.amount) FILTER (WHERE e.kind IN ('consume', 'release')), 0))::integer AS net_reserved,
        coalesce(sum(e.amount) FILTER (WHERE e.kind = 'consume'), 0)::integer AS consumed_entries
      FROM credit_lots l
      LEFT JOIN (SELECT organisation_id, lot_id, kind, amount FROM credit_entries
        UNION ALL SELECT organisation_id, lot_id, kind, amount FROM credit_entry_totals) e
        ON e.organisation_id = l.organisation_id AND e.lot_id = l.id
      WHERE l.organisation_id = ${organisationId}
      GROUP BY l.id, l.amount, l.reserved, l.consumed
      ORDER BY l.id`
  })

export interface TotalsRow {
  readonly lotSeq: number
  readonly month: string
  readonly kind: string
  readonly amount: number
  readonly entries: number
}

/** The organisation's folded totals, summed per lot (by grant order), month and kind. */
export const totalsRows = (organisationId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<TotalsRow>`SELECT ${sql.literal(lotSeq("t"))},
        t.month::text AS month, t.kind, sum(t.amount)::integer AS amount, sum(t.entries)::integer AS entries
      FROM credit_entry_totals t WHERE t.organisation_id = ${organisationId}
      GROUP BY t.organisation_id, t.lot_id, t.month, t.kind ORDER BY 1, 2, 3`
  })

/** The journal's monthly partitions (YYYYMM), oldest first. */
export const journalMonths = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{
    name: string
  }>`SELECT c.relname::text AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'credit_entries'::regclass AND c.relname LIKE 'credit_entries_p%' ORDER BY 1`
  return rows.map((r) => r.name.slice("credit_entries_p".length))
})
