/**
 * Each organisation's opt-out list (`opt_outs`), owned here (docs/two-way.md).
 * An opt-out or opt-in writes its `contact.opted_out` / `contact.opted_in` event in the statement
 * that makes it, and only when it changes something. Admission and hand-over check the list with
 * the fragment `optedOut`, one lookup by the table's key inside their own statements.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { ListPosition } from "../domain/NewestFirst.ts"
import { dataEvents } from "../webhooks/DataEvents.ts"

export type OptOutSource = "sms" | "api" | "operator"

export interface OptOutRow extends ListPosition {
  readonly phoneNumber: string
  readonly source: OptOutSource
  readonly inboundMessageId: string | null
}

/** A change of consent: who, how, and the inbound message that asked for it, if one did. */
export interface ConsentChange {
  readonly organisationId: string
  readonly phoneNumber: string
  readonly source: OptOutSource
  readonly inboundMessageId: string | null
  readonly at: Date
}

/** Whether `phone` (an SQL expression) is opted out of the organisation `org` (an SQL expression), as SQL: one lookup by key. */
export const optedOut = (sql: SqlClient.SqlClient, org: Statement.Fragment, phone: Statement.Fragment) =>
  sql`EXISTS (SELECT 1 FROM opt_outs AS oo WHERE oo.organisation_id = ${org} AND oo.phone_number = ${phone})`

/** Whether any of `phones` (an SQL text array) is opted out of the organisation `org`, as SQL: one lookup by key each. */
export const optedOutAny = (sql: SqlClient.SqlClient, org: Statement.Fragment, phones: Statement.Fragment) =>
  sql`EXISTS (SELECT 1 FROM opt_outs AS oo WHERE oo.organisation_id = ${org} AND oo.phone_number = ANY(${phones}))`

const eventData = `jsonb_build_object('phone_number', c.phone_number, 'source', c.source,
  'inbound_message_id', c.inbound_message_id)`

export class OptOutStore extends Context.Service<
  OptOutStore,
  {
    /** Opts the number out (with its event) unless it already is; whether it was opted out now. */
    readonly optOut: (change: ConsentChange & { readonly id: string }) => Fails<boolean>
    /** Opts the number back in (with its event); whether it was opted out. */
    readonly optIn: (change: ConsentChange) => Fails<boolean>
    readonly isOptedOut: (organisationId: string, phoneNumber: string) => Fails<boolean>
    readonly find: (organisationId: string, phoneNumber: string) => Fails<OptOutRow | undefined>
    /** Which of `phoneNumbers` are opted out of the organisation (one lookup by key each, in one statement). */
    readonly optedOutAmong: (organisationId: string, phoneNumbers: ReadonlyArray<string>) => Fails<ReadonlySet<string>>
    /** At most `limit + 1` opt-outs of the organisation, newest first, after `after`. */
    readonly list: (
      organisationId: string,
      limit: number,
      after: ListPosition | undefined
    ) => Fails<ReadonlyArray<OptOutRow>>
    /** Opted-out numbers by source, over every organisation (for /metrics). */
    readonly countBySource: Fails<ReadonlyArray<{ readonly source: OptOutSource; readonly n: number }>>
  }
>()("sms/OptOutStore") {
  static readonly layer = Layer.effect(
    OptOutStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return OptOutStore.of({
        optOut: (c) =>
          fromDatabase(
            sql<{ n: number }>`WITH c AS (
              INSERT INTO opt_outs (organisation_id, phone_number, id, source, inbound_message_id, created_at)
              VALUES (${c.organisationId}, ${c.phoneNumber}, ${c.id}, ${c.source}, ${c.inboundMessageId}, ${c.at})
              ON CONFLICT (organisation_id, phone_number) DO NOTHING
              RETURNING organisation_id, phone_number, source, inbound_message_id),
            r AS (SELECT c.organisation_id, ${sql.literal(eventData)} AS data FROM c),
            ${dataEvents(sql, "oo", "r", "contact.opted_out", c.at)}
            SELECT count(*)::integer AS n FROM c`.pipe(Effect.map(([row]) => (row?.n ?? 0) > 0))
          ),
        optIn: (c) =>
          fromDatabase(
            sql<{ n: number }>`WITH c AS (
              DELETE FROM opt_outs WHERE organisation_id = ${c.organisationId} AND phone_number = ${c.phoneNumber}
              RETURNING organisation_id, phone_number, ${c.source}::text AS source,
                ${c.inboundMessageId}::uuid AS inbound_message_id),
            r AS (SELECT c.organisation_id, ${sql.literal(eventData)} AS data FROM c),
            ${dataEvents(sql, "oi", "r", "contact.opted_in", c.at)}
            SELECT count(*)::integer AS n FROM c`.pipe(Effect.map(([row]) => (row?.n ?? 0) > 0))
          ),
        isOptedOut: (organisationId, phoneNumber) =>
          fromDatabase(
            sql<{
              out: boolean
            }>`SELECT ${optedOut(sql, sql`${organisationId}::uuid`, sql`${phoneNumber}`)} AS out`.pipe(
              Effect.map(([row]) => row?.out ?? false)
            )
          ),
        optedOutAmong: (organisationId, phoneNumbers) =>
          phoneNumbers.length === 0
            ? Effect.succeed(new Set<string>())
            : fromDatabase(
                sql<{ phoneNumber: string }>`SELECT phone_number FROM opt_outs
                WHERE organisation_id = ${organisationId} AND phone_number = ANY(${phoneNumbers}::text[])`.pipe(
                  Effect.map((rows) => new Set(rows.map((r) => r.phoneNumber)))
                )
              ),
        find: (organisationId, phoneNumber) =>
          fromDatabase(
            sql<OptOutRow>`SELECT id::text, phone_number, source, inbound_message_id::text, created_at FROM opt_outs
            WHERE organisation_id = ${organisationId} AND phone_number = ${phoneNumber}`.pipe(
              Effect.map((rows) => rows[0])
            )
          ),
        list: (organisationId, limit, after) =>
          fromDatabase(
            sql<OptOutRow>`SELECT id::text, phone_number, source, inbound_message_id::text, created_at FROM opt_outs
            WHERE organisation_id = ${organisationId}
              ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after.createdAt}, ${after.id}::uuid)`}
            ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
          ),
        countBySource: fromDatabase(
          sql<{ source: OptOutSource; n: number }>`SELECT source, count(*)::float8 AS n FROM opt_outs GROUP BY source`
        )
      })
    })
  )
}
