/**
 * What the MessageStore reads: a message (by its organisation, or anywhere for the operator), an
 * organisation's messages newest first, a batch's members and their counts by status, a
 * message's timeline (collapsed into its row, then any rows of its own), and the counts of
 * /metrics. Each read looks in `messages` and, for a message erased and packed since, in the
 * packs (PackedMessages.ts).
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import { finalStatuses, type MessageStatus } from "../domain/MessageStatus.ts"
import type { ListPosition } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import { organisationFragments } from "../organisations/OrganisationStore.ts"
import { type EventSource, unpackedEntries } from "./CompactTimeline.ts"
import type { MessageRow } from "./MessageRow.ts"
import { messageColumns } from "./MessageSql.ts"
import { packedFragments } from "./PackedMessages.ts"

export interface TimelineEntry {
  readonly fromStatus: MessageStatus | null
  readonly toStatus: MessageStatus
  readonly source: EventSource
  readonly at: Date
}

/** What `providerRefOf` reads of a message. */
export interface ProviderRefOf {
  readonly organisationId: string
  readonly providerRef: string | null
  readonly toNumber: string
  readonly status: MessageStatus
}

/** A message with the instant it was admitted (the order of an organisation's message list). */
export interface ListedMessage extends MessageRow {
  readonly createdAt: Date
}

/** Messages in each status not final, the due backlog and its oldest age: the cheap gauges of /metrics. */
export interface InFlightCounts {
  readonly scheduled: number
  readonly processing: number
  readonly accepted: number
  readonly unknown: number
  readonly due: number
  readonly oldestDueAgeSeconds: number
}

export interface MessageReads {
  /** The message with this id whatever its organisation (the operator's lookup). */
  readonly findAnywhere: (id: string) => Fails<MessageRow | undefined>
  /**
   * At most `limit + 1` of the organisation's messages, newest first (in id order, the order of
   * creation), after `after` (the last message of the previous page), only those in `status` when given.
   */
  readonly newestFirst: (
    organisationId: string,
    options: {
      readonly limit: number
      readonly after: ListPosition | undefined
      readonly status: MessageStatus | undefined
    }
  ) => Fails<ReadonlyArray<ListedMessage>>
  /**
   * The provider ref a message was accepted under (null while it has none: not yet handed over, its
   * answer not yet recorded, or unknown), with its organisation, recipient and status, whatever its
   * organisation; undefined when there is no such message in `messages`. What a OneAPI receipt,
   * which names our message, needs to be stored (docs/operators.md#oneapi-routes).
   */
  readonly providerRefOf: (id: string) => Fails<ProviderRefOf | undefined>
  /** The message if it belongs to the organisation. */
  readonly find: (organisationId: string, id: string) => Fails<MessageRow | undefined>
  /** At most `limit` messages of a batch after `afterPosition`, in submitted order, each with its position. */
  readonly ofBatch: (
    organisationId: string,
    batchId: string,
    afterPosition: number,
    limit: number
  ) => Fails<ReadonlyArray<MessageRow & { readonly batchPosition: number }>>
  /** How many messages of each of these batches are in each status, in one statement. */
  readonly countsOfBatches: (
    organisationId: string,
    batchIds: ReadonlyArray<string>
  ) => Fails<ReadonlyArray<{ readonly batchId: string; readonly status: MessageStatus; readonly n: number }>>
  /** The message's status changes, oldest first: those collapsed into its row, then any still in rows of their own. */
  readonly timeline: (organisationId: string, id: string) => Fails<ReadonlyArray<TimelineEntry>>
  /** The statuses not final, and the backlog of messages due by `at`, counted over partial indexes. */
  readonly inFlightCounts: (at: Date) => Fails<InFlightCounts>
  /** Messages in each final status (reads every message). */
  readonly finalCounts: Fails<ReadonlyArray<{ readonly status: MessageStatus; readonly n: number }>>
}

const columns = messageColumns()

/** The reads of the MessageStore, on `sql`. */
export const messageReads = (sql: SqlClient.SqlClient): MessageReads => {
  const organisations = organisationFragments(sql)
  const packed = packedFragments(sql)

  // count(*) is bigint: read as float8 so the driver hands numbers back
  const inFlightCounts = (at: Date) =>
    fromDatabase(
      sql<InFlightCounts>`SELECT
          (SELECT count(*) FROM messages WHERE status = 'scheduled')::float8 AS scheduled,
          (SELECT count(*) FROM messages WHERE status = 'processing')::float8 AS processing,
          (SELECT count(*) FROM messages WHERE status = 'accepted')::float8 AS accepted,
          (SELECT count(*) FROM messages WHERE status = 'unknown')::float8 AS unknown,
          due.n::float8 AS due,
          greatest(coalesce(extract(epoch FROM ${at}::timestamptz - due.oldest), 0), 0)::float8 AS oldest_due_age_seconds
        FROM (SELECT count(*) AS n, min(due_at) AS oldest FROM messages WHERE status = 'scheduled' AND due_at <= ${at}) due`.pipe(
        Effect.map((rows) => rows[0]!)
      )
    )

  return {
    // a message's row first, by its key in each organisation (the operator's lookup is rare; an
    // index by id alone would cost every version of every row an entry); a packed message is
    // only looked for when there is none (the second part of a UNION ALL under LIMIT 1 runs only
    // if the first gave nothing)
    findAnywhere: Effect.fn("MessageStore.findAnywhere")(function* (id: string) {
      if (!isUuid(id)) return undefined
      const rows = yield* fromDatabase(sql<MessageRow>`WITH ${organisations.organisationIds}
          (SELECT ${sql.literal(messageColumns("m"))} FROM organisation_ids AS o
            JOIN messages AS m ON m.organisation_id = o.id AND m.id = ${id}::uuid LIMIT 1)
          UNION ALL (${packed.findAnywhere(id)}) LIMIT 1`)
      return rows[0]
    }),
    // by id: a message's id is made from its creation's instant (Ids.timeOrdered), so the key's
    // order is the order of creation (the random ids of a database from before list by id too)
    newestFirst: (organisationId, { limit, after, status }) =>
      fromDatabase(sql<ListedMessage>`SELECT * FROM (
            (SELECT ${sql.literal(messageColumns("m"))}, m.created_at FROM messages AS m
            WHERE organisation_id = ${organisationId}
              ${status === undefined ? sql`` : sql`AND status = ${status}`}
              ${after === undefined ? sql`` : sql`AND m.id < ${after.id}::uuid`}
            ORDER BY m.id DESC LIMIT ${limit + 1})
            UNION ALL (${packed.newestFirst(organisationId, limit + 1, after?.id, status)})) AS x
          ORDER BY id::uuid DESC LIMIT ${limit + 1}`),
    providerRefOf: Effect.fn("MessageStore.providerRefOf")(function* (id: string) {
      if (!isUuid(id)) return undefined
      const rows = yield* fromDatabase(sql<ProviderRefOf>`WITH ${organisations.organisationIds}
          SELECT m.organisation_id::text, m.provider_message_id AS provider_ref, m.to_number, m.status
          FROM organisation_ids AS o
            JOIN messages AS m ON m.organisation_id = o.id AND m.id = ${id}::uuid LIMIT 1`)
      return rows[0]
    }),
    find: Effect.fn("MessageStore.find")(function* (organisationId: string, id: string) {
      if (!isUuid(id)) return undefined
      const rows = yield* fromDatabase(sql<MessageRow>`(SELECT ${sql.literal(columns)} FROM messages
            WHERE organisation_id = ${organisationId} AND id = ${id})
          UNION ALL (${packed.find(organisationId, id)}) LIMIT 1`)
      return rows[0]
    }),
    ofBatch: (organisationId, batchId, afterPosition, limit) =>
      fromDatabase(sql<MessageRow & { batchPosition: number }>`SELECT * FROM (
            (SELECT ${sql.literal(columns)}, batch_position
            FROM messages WHERE organisation_id = ${organisationId} AND batch_id = ${batchId} AND batch_position > ${afterPosition}
            ORDER BY batch_position LIMIT ${limit})
            UNION ALL (${packed.ofBatch(organisationId, batchId, afterPosition, limit)})) AS x
          ORDER BY batch_position LIMIT ${limit}`),
    countsOfBatches: (organisationId, batchIds) =>
      batchIds.length === 0
        ? Effect.succeed([])
        : fromDatabase(sql<{
            batchId: string
            status: MessageStatus
            n: number
          }>`SELECT batch_id::text, status, sum(n)::integer AS n
            FROM (SELECT batch_id, status, count(*) AS n FROM messages
              WHERE organisation_id = ${organisationId} AND batch_id = ANY(${batchIds}::uuid[]) GROUP BY batch_id, status
              UNION ALL ${packed.countsOfBatches(organisationId, batchIds)}) AS x
            GROUP BY 1, 2`),
    // A collapsed entry's from_status is the previous one's to_status (CompactTimeline.ts). Rows
    // may follow a collapsed timeline (none can today: a final message never moves again, and
    // erasure writes no entry); they come after it, as they were written after it.
    timeline: (organisationId, id) =>
      fromDatabase(sql<TimelineEntry>`SELECT from_status, to_status, source, at FROM (
            SELECT 0 AS part, c.n AS ord, lag(c.to_status) OVER (ORDER BY c.n) AS from_status, c.to_status, c.source, c.at
            FROM ((SELECT timeline FROM messages WHERE organisation_id = ${organisationId} AND id = ${id})
              UNION ALL (${packed.timeline(organisationId, id)}) LIMIT 1) AS m
            CROSS JOIN LATERAL (${sql.literal(unpackedEntries("m.timeline"))}) AS c
            UNION ALL
            SELECT 1, e.id, e.from_status, e.to_status, e.source, e.at FROM message_events AS e
            WHERE e.organisation_id = ${organisationId} AND e.message_id = ${id}) AS t
          ORDER BY part, ord`),
    inFlightCounts,
    finalCounts: fromDatabase(sql<{ status: MessageStatus; n: number }>`SELECT status, sum(n)::float8 AS n
        FROM (SELECT status, count(*) AS n FROM messages WHERE status IN ${sql.in(finalStatuses)} GROUP BY status
          UNION ALL ${packed.statusCounts}) AS x
        GROUP BY status`)
  }
}
