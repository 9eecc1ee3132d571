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
export const newOrganisation = Effect.gen(function*() {
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
  Effect.gen(function*() {
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

/** Every hold of the organisation, with its lot named by grant order, sorted by message then lot. */
export const holdRows = (organisationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<HoldRow>`SELECT h.message_id::text AS message_id,
        (SELECT count(*) FROM credit_lots l WHERE l.organisation_id = h.organisation_id AND l.id < h.lot_id)::integer AS lot_seq,
        (SELECT l.valid_until::text FROM credit_lots l WHERE l.organisation_id = h.organisation_id AND l.id = h.lot_id) AS valid_until,
        h.amount, h.state
      FROM credit_holds h WHERE h.organisation_id = ${organisationId}
      ORDER BY h.message_id, h.lot_id`
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

/** Per lot, its counters next to what its credit_entries add up to. */
export const entrySums = (organisationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<EntryCheckRow>`SELECT
        (row_number() OVER (ORDER BY l.id) - 1)::integer AS lot_seq,
        l.amount, l.reserved, l.consumed,
        coalesce(sum(e.amount) FILTER (WHERE e.kind = 'grant'), 0)::integer AS granted,
        (coalesce(sum(e.amount) FILTER (WHERE e.kind = 'reserve'), 0)
          - coalesce(sum(e.amount) FILTER (WHERE e.kind IN ('consume', 'release')), 0))::integer AS net_reserved,
        coalesce(sum(e.amount) FILTER (WHERE e.kind = 'consume'), 0)::integer AS consumed_entries
      FROM credit_lots l
      LEFT JOIN credit_entries e ON e.organisation_id = l.organisation_id AND e.lot_id = l.id
      WHERE l.organisation_id = ${organisationId}
      GROUP BY l.id, l.amount, l.reserved, l.consumed
      ORDER BY l.id`
  })
