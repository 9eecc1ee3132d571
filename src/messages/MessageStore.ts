/**
 * The SQL of messages and their timeline. Every status change after admission goes through
 * `transitionSet`, which moves each row only from its expected states and writes its timeline
 * entry in the same statement; the caller's transaction makes it atomic with the ledger.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { canTransition, type MessageStatus } from "../domain/MessageStatus.ts"
import { type ListPage, type ListPosition, pageOf } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import type { MessageRow } from "./MessageBody.ts"

export type EventSource = "admission" | "provider" | "receipt" | "verification" | "recovery" | "dispatch" | "erasure"

export interface NewMessage {
  readonly id: string
  readonly batchId: string | null
  readonly batchPosition: number | null
  readonly toNumber: string
  readonly senderName: string
  readonly text: string
  readonly segments: number
  readonly status: "scheduled" | "processing"
  readonly sendAt: Date | null
  /** The process that goes on to submit it (an immediate send, created `processing`); null for a scheduled one. */
  readonly workerId: string | null
}

export interface TransitionChanges {
  readonly providerRef?: string
  readonly deliveryTime?: Date
  /** For `unknown`: when the verifier should first ask the provider. */
  readonly verifyAt?: Date
}

/** One message's move from one of `from` to `to` (a transition of contract section 7), with its timeline entry. */
export interface Transition extends TransitionChanges {
  readonly organisationId: string
  readonly id: string
  readonly from: ReadonlyArray<MessageStatus>
  readonly to: MessageStatus
  readonly source: EventSource
  readonly at: Date
}

export interface TimelineEntry {
  readonly fromStatus: MessageStatus | null
  readonly toStatus: MessageStatus
  readonly source: EventSource
  readonly at: Date
}

/** The select list of a MessageRow, optionally qualified by a table alias. */
export const messageColumns = (alias = "") => {
  const a = alias === "" ? "" : `${alias}.`
  return `${a}organisation_id::text, ${a}id::text, ${a}batch_id::text, ${a}to_number, ${a}sender_name, ${a}text,
  ${a}segments::integer, ${a}status, ${a}send_at, ${a}delivery_time, ${a}erased_at`
}
const columns = messageColumns()

/** A message with the instant it was admitted (the order of an organisation's message list). */
export interface ListedMessage extends MessageRow {
  readonly createdAt: Date
}

export class MessageStore extends Context.Service<MessageStore, {
  /** Inserts messages of one organisation in one statement, each with its admission timeline entry. */
  readonly insert: (organisationId: string, messages: ReadonlyArray<NewMessage>, at: Date) => Effect.Effect<void, SqlError.SqlError>
  /** The message with this id whatever its organisation (the operator's lookup). */
  readonly findAnywhere: (id: string) => Effect.Effect<MessageRow | undefined, SqlError.SqlError>
  /**
   * A page of at most `limit` of the organisation's messages, newest first, after `after` (the
   * last message of the previous page), only those in `status` when given.
   */
  readonly page: (
    organisationId: string,
    options: { readonly limit: number; readonly after: ListPosition | undefined; readonly status: MessageStatus | undefined }
  ) => Effect.Effect<ListPage<ListedMessage>, SqlError.SqlError>
  /** The message if it belongs to the organisation. */
  readonly find: (organisationId: string, id: string) => Effect.Effect<MessageRow | undefined, SqlError.SqlError>
  /**
   * Applies a set of transitions in one statement, each with its timeline entry; a message not
   * in one of its `from` states is left alone. Returns, per transition, the status it moved from,
   * or undefined when it did not move. The caller's transaction makes it atomic with the rest.
   */
  readonly transitionSet: (transitions: ReadonlyArray<Transition>) => Effect.Effect<ReadonlyArray<MessageStatus | undefined>, SqlError.SqlError>
  /** Records that the message is about to be handed to the provider (after this, a crash means "unknown"). */
  readonly markSubmitted: (organisationId: string, ids: ReadonlyArray<string>, at: Date) => Effect.Effect<void, SqlError.SqlError>
  /** The message's status changes, oldest first. */
  readonly timeline: (organisationId: string, id: string) => Effect.Effect<ReadonlyArray<TimelineEntry>, SqlError.SqlError>
  /** Blanks recipient, sender and text of a message whose processing is finished; returns it, or undefined if not finished. */
  readonly erase: (organisationId: string, id: string, at: Date) => Effect.Effect<MessageRow | undefined, SqlError.SqlError>
}>()("sms/MessageStore") {
  static readonly layer = Layer.effect(MessageStore, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = Effect.fn("MessageStore.insert")(function*(organisationId: string, messages: ReadonlyArray<NewMessage>, at: Date) {
      if (messages.length === 0) return
      const rows = messages.map((m) => ({
        id: m.id,
        batch_id: m.batchId,
        batch_position: m.batchPosition,
        to_number: m.toNumber,
        sender_name: m.senderName,
        text: m.text,
        segments: m.segments,
        status: m.status,
        send_at: m.sendAt?.toISOString() ?? null,
        worker_id: m.workerId
      }))
      yield* sql`WITH m AS (
          INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text, segments,
            status, send_at, due_at, worker_id, created_at, updated_at)
          SELECT ${organisationId}, x.id, x.batch_id, x.batch_position, x.to_number, x.sender_name, x.text, x.segments,
            x.status, x.send_at, CASE WHEN x.status = 'scheduled' THEN x.send_at END, x.worker_id, ${at}, ${at}
          FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(id uuid, batch_id uuid, batch_position integer,
            to_number text, sender_name text, text text, segments smallint, status text, send_at timestamptz, worker_id uuid)
          RETURNING organisation_id, id, status)
        INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
        SELECT organisation_id, id, NULL, status, 'admission', ${at} FROM m`
    })

    const find = Effect.fn("MessageStore.find")(function*(organisationId: string, id: string) {
      if (!isUuid(id)) return undefined
      const rows = yield* sql<MessageRow>`SELECT ${sql.literal(columns)} FROM messages
        WHERE organisation_id = ${organisationId} AND id = ${id}`
      return rows[0]
    })

    const transitionSet = Effect.fn("MessageStore.transitionSet")(function*(transitions: ReadonlyArray<Transition>) {
      if (transitions.length === 0) return []
      for (const t of transitions) {
        if (!t.from.every((f) => canTransition(f, t.to))) {
          return yield* Effect.die(new Error(`illegal transition ${t.from.join("|")} -> ${t.to}`))
        }
      }
      const rows = transitions.map((t, i) => ({
        i,
        organisation_id: t.organisationId,
        id: t.id,
        from_statuses: t.from.join(","),
        to_status: t.to,
        source: t.source,
        at: t.at.toISOString(),
        provider_ref: t.providerRef ?? null,
        delivery_time: t.deliveryTime?.toISOString() ?? null,
        verify_at: t.verifyAt?.toISOString() ?? null
      }))
      // Rows are locked in key order so that concurrent sets cannot deadlock on each other.
      const moved = yield* sql<{ i: number; fromStatus: MessageStatus }>`WITH x AS (
          SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(i integer, organisation_id uuid, id uuid,
            from_statuses text, to_status text, source text, at timestamptz, provider_ref text, delivery_time timestamptz,
            verify_at timestamptz)),
        old AS (
          SELECT m.organisation_id, m.id, m.status, x.i FROM messages m JOIN x ON m.organisation_id = x.organisation_id AND m.id = x.id
          WHERE m.status = ANY(string_to_array(x.from_statuses, ','))
          ORDER BY m.organisation_id, m.id
          FOR UPDATE OF m),
        u AS (
          UPDATE messages AS m SET status = x.to_status, updated_at = x.at,
            provider_message_id = coalesce(x.provider_ref, m.provider_message_id),
            delivery_time = coalesce(x.delivery_time, m.delivery_time),
            verify_at = x.verify_at,
            worker_id = CASE WHEN x.to_status = 'processing' THEN m.worker_id END,
            claim_until = NULL
          FROM old JOIN x ON x.i = old.i
          WHERE m.organisation_id = old.organisation_id AND m.id = old.id
          RETURNING m.organisation_id, m.id, old.status AS from_status, x.to_status, x.source, x.at, x.i),
        e AS (
          INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
          SELECT organisation_id, id, from_status, to_status, source, at FROM u)
        SELECT i, from_status FROM u`
      const byIndex = new Map(moved.map((r) => [r.i, r.fromStatus]))
      return transitions.map((_, i) => byIndex.get(i))
    })

    return MessageStore.of({
      insert,
      findAnywhere: Effect.fn("MessageStore.findAnywhere")(function*(id: string) {
        if (!isUuid(id)) return undefined
        const rows = yield* sql<MessageRow>`SELECT ${sql.literal(columns)} FROM messages WHERE id = ${id} LIMIT 1`
        return rows[0]
      }),
      page: Effect.fn("MessageStore.page")(function*(organisationId, { limit, after, status }) {
        // one more than asked tells whether a next page exists
        const rows = yield* sql<ListedMessage>`SELECT ${sql.literal(columns)}, created_at FROM messages
          WHERE organisation_id = ${organisationId}
            ${status === undefined ? sql`` : sql`AND status = ${status}`}
            ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after.createdAt}, ${after.id}::uuid)`}
          ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
        return pageOf(rows, limit)
      }),
      find,
      transitionSet,
      markSubmitted: (organisationId, ids, at) =>
        sql`UPDATE messages SET submitted_at = ${at}, updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND id = ANY(${ids}::uuid[])`.pipe(Effect.asVoid),
      timeline: (organisationId, id) =>
        sql<TimelineEntry>`SELECT from_status, to_status, source, at FROM message_events
          WHERE organisation_id = ${organisationId} AND message_id = ${id} ORDER BY id`,
      erase: Effect.fn("MessageStore.erase")(function*(organisationId: string, id: string, at: Date) {
        const rows = yield* sql<MessageRow>`UPDATE messages
          SET to_number = '', sender_name = '', text = '', erased_at = coalesce(erased_at, ${at}), updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND id = ${id}
            AND status IN ('delivered', 'undeliverable', 'failed', 'blocked')
          RETURNING ${sql.literal(columns)}`
        return rows[0]
      })
    })
  }))
}
