/**
 * Inbound messages (`inbound_messages`), owned here (docs/two-way.md):
 * each made once from its parts, routed to an organisation or kept unrouted for the operator,
 * with its `message.received` event written in the same statement. Every read of an
 * organisation's messages is scoped by it; retention erases the sender and the text and keeps the rest.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { ListPosition } from "../domain/NewestFirst.ts"
import { dataEvents } from "../webhooks/DataEvents.ts"

export interface InboundMessageRow {
  readonly id: string
  readonly organisationId: string | null
  readonly source: string
  readonly fromNumber: string
  readonly toNumber: string
  readonly text: string
  readonly textHex: string | null
  readonly dataCoding: number
  readonly keyword: string | null
  readonly segments: number
  readonly incomplete: boolean
  readonly inReplyTo: string | null
  readonly receivedAt: Date
  readonly routed: boolean
}

/** The row as a list position (newest first by arrival). */
export const positionOf = (row: InboundMessageRow): ListPosition => ({ createdAt: row.receivedAt, id: row.id })

const columns = `id::text, organisation_id::text, source, from_number, to_number, text, text_hex, data_coding, keyword,
  segments, incomplete, in_reply_to::text, received_at, routed`

export class InboundMessageStore extends Context.Service<
  InboundMessageStore,
  {
    /** Stores a message made from its parts, and, when routed, its `message.received` event with `data`. */
    readonly insert: (row: InboundMessageRow, data: unknown, at: Date) => Fails<void>
    readonly find: (organisationId: string, id: string) => Fails<InboundMessageRow | undefined>
    /** At most `limit + 1` of the organisation's inbound messages, newest first, after `after`. */
    readonly list: (
      organisationId: string,
      limit: number,
      after: ListPosition | undefined
    ) => Fails<ReadonlyArray<InboundMessageRow>>
    /** At most `limit + 1` unrouted messages (or routed, with `routed`), newest first, after `after`: the operator's view. */
    readonly listAll: (
      routed: boolean | undefined,
      limit: number,
      after: ListPosition | undefined
    ) => Fails<ReadonlyArray<InboundMessageRow>>
    /**
     * Erases the sender and text of up to `limit` routed messages received before their
     * organisation's retention (`defaultDays` for those without their own); how many.
     */
    readonly eraseExpired: (at: Date, defaultDays: number | undefined, limit: number) => Fails<number>
  }
>()("sms/InboundMessageStore") {
  static readonly layer = Layer.effect(
    InboundMessageStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return InboundMessageStore.of({
        insert: (m, data, at) =>
          fromDatabase(
            sql`WITH m AS (
              INSERT INTO inbound_messages (id, organisation_id, source, from_number, to_number, text, text_hex, data_coding,
                keyword, segments, incomplete, in_reply_to, received_at, routed)
              VALUES (${m.id}, ${m.organisationId}, ${m.source}, ${m.fromNumber}, ${m.toNumber}, ${m.text}, ${m.textHex},
                ${m.dataCoding}, ${m.keyword}, ${m.segments}, ${m.incomplete}, ${m.inReplyTo}, ${m.receivedAt}, ${m.routed})
              RETURNING organisation_id),
            r AS (SELECT organisation_id, ${JSON.stringify(data)}::jsonb AS data FROM m),
            ${dataEvents(sql, "mr", "r", "message.received", at)}
            SELECT 1`.pipe(Effect.asVoid)
          ),
        find: (organisationId, id) =>
          fromDatabase(
            sql<InboundMessageRow>`SELECT ${sql.literal(columns)} FROM inbound_messages
            WHERE organisation_id = ${organisationId} AND id = ${id}`.pipe(Effect.map((rows) => rows[0]))
          ),
        list: (organisationId, limit, after) =>
          fromDatabase(
            sql<InboundMessageRow>`SELECT ${sql.literal(columns)} FROM inbound_messages
            WHERE organisation_id = ${organisationId}
              ${after === undefined ? sql`` : sql`AND (received_at, id) < (${after.createdAt}, ${after.id}::uuid)`}
            ORDER BY received_at DESC, id DESC LIMIT ${limit + 1}`
          ),
        listAll: (routed, limit, after) =>
          fromDatabase(
            sql<InboundMessageRow>`SELECT ${sql.literal(columns)} FROM inbound_messages
            WHERE ${routed === undefined ? sql`true` : sql`routed = ${routed}`}
              ${after === undefined ? sql`` : sql`AND (received_at, id) < (${after.createdAt}, ${after.id}::uuid)`}
            ORDER BY received_at DESC, id DESC LIMIT ${limit + 1}`
          ),
        eraseExpired: (at, defaultDays, limit) =>
          fromDatabase(
            sql<{ n: number }>`WITH due AS (
              SELECT i.id FROM organisations AS o
              CROSS JOIN LATERAL (
                SELECT id FROM inbound_messages AS i
                WHERE i.organisation_id = o.id AND i.erased_at IS NULL
                  AND i.received_at < ${at}::timestamptz - make_interval(days => coalesce(o.retention_days, ${defaultDays ?? null}::integer))
                LIMIT ${limit}) AS i
              WHERE coalesce(o.retention_days, ${defaultDays ?? null}::integer) IS NOT NULL
              LIMIT ${limit}),
            erased AS (
              UPDATE inbound_messages AS i SET from_number = '', text = '', text_hex = NULL, erased_at = ${at}
              FROM due WHERE i.id = due.id RETURNING i.organisation_id, i.id),
            events AS (
              UPDATE webhook_events AS w SET message = w.message || '{"from": "", "text": ""}'::jsonb
              FROM erased AS e
              WHERE w.organisation_id = e.organisation_id AND w.type = 'message.received' AND w.message ->> 'id' = e.id::text)
            SELECT count(*)::integer AS n FROM erased`.pipe(Effect.map(([row]) => row?.n ?? 0))
          )
      })
    })
  )
}
