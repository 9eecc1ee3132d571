/**
 * The table of messages with their timelines (`messages`), owned here, with the text of each
 * batch, stored once for its members (`message_texts`), and the timeline rows of an upgraded
 * database (`message_events`, no longer written). Every status change after admission
 * goes through `transitionSet` (or a statement composed from the fragments below), which moves each
 * row only from its expected states and appends its timeline entry to the row in the same
 * statement (CompactTimeline.ts); the caller's transaction makes it atomic with the ledger. The
 * rows an upgraded database still holds for its finished messages are collapsed into their
 * message's row by compaction a day after it became final (`collapseTimelines`); `timeline` reads
 * both. What dispatch, verification and recovery claim is in MessageQueueStore.ts; the fragments
 * at the end are what other modules' statements compose (the one-statement admission, receipts).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import { canTransition, finalStatuses, type MessageStatus } from "../domain/MessageStatus.ts"
import type { ListPosition } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import { organisationFragments } from "../organisations/OrganisationStore.ts"
import { webhookOutbox, webhookSubscribed } from "../webhooks/WebhookStore.ts"
import { admitted, appended, encodable, type EventSource, packedEntry, unpackedEntries } from "./CompactTimeline.ts"
import type { MessageRow } from "./MessageRow.ts"
import { packedFragments } from "./PackedMessages.ts"

export type { EventSource } from "./CompactTimeline.ts"

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

/** One message's move from one of `from` to `to` (a transition of docs/decisions.md#message-states), with its timeline entry. */
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

/** Which message: its organisation and id. */
export interface MessageKey {
  readonly organisationId: string
  readonly id: string
}

/** The final statuses as SQL literals, so that the planner matches the partial index messages_erasable. */
const finalList = `(${finalStatuses.map((s) => `'${s}'`).join(", ")})`

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

/**
 * A message's text: its own, or (a batch's member: null in its row) its batch's in `message_texts`.
 * `row` names the row of `messages` (its alias, or the table).
 */
const textOf = (row: string) =>
  `coalesce(${row}.text, (SELECT t.text FROM message_texts AS t WHERE t.organisation_id = ${row}.organisation_id AND t.batch_id = ${row}.batch_id))`

/** The select list of a MessageRow, optionally qualified by a table alias. */
export const messageColumns = (alias = "") => {
  const a = alias === "" ? "" : `${alias}.`
  return `${a}organisation_id::text, ${a}id::text, ${a}batch_id::text, ${a}to_number, ${a}sender_name,
  ${textOf(alias === "" ? "messages" : alias)} AS text, ${a}segments::integer, ${a}status, ${a}send_at, ${a}delivery_time, ${a}erased_at`
}
const columns = messageColumns()

export class MessageStore extends Context.Service<
  MessageStore,
  {
    /** Inserts messages of one organisation in one statement, each with its timeline's admission entry. */
    readonly insert: (organisationId: string, messages: ReadonlyArray<NewMessage>, at: Date) => Fails<void>
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
    /**
     * Applies a set of transitions in one statement, each with its timeline entry; a message not
     * in one of its `from` states is left alone. Returns, per transition, the status it moved from,
     * or undefined when it did not move. The caller's transaction makes it atomic with the rest.
     */
    readonly transitionSet: (transitions: ReadonlyArray<Transition>) => Fails<ReadonlyArray<MessageStatus | undefined>>
    /** Records that the message is about to be handed to the provider (after this, a crash means "unknown"). */
    readonly markSubmitted: (organisationId: string, ids: ReadonlyArray<string>, at: Date) => Fails<void>
    /** The message's status changes, oldest first: those collapsed into its row, then any still in rows of their own. */
    readonly timeline: (organisationId: string, id: string) => Fails<ReadonlyArray<TimelineEntry>>
    /**
     * Collapses the timelines of at most `limit` messages final since before `before` (and not
     * collapsed yet) into their own rows, in one statement: their `message_events` rows are packed
     * into `messages.timeline` and deleted. Messages another transaction holds are skipped, so an
     * admission, which never waits for a final message anyway, never waits for this. Returns the
     * messages it collapsed.
     */
    readonly collapseTimelines: (before: Date, limit: number) => Fails<ReadonlyArray<MessageKey>>
    /**
     * Blanks recipient, sender and text of each of these messages whose processing is finished, in
     * one statement, and clears what only the work on a message in flight reads (the provider's id,
     * submission, due and verification times, leases); returns those (the others are left alone).
     * A batch's text goes with the last of its members erased.
     */
    readonly erase: (messages: ReadonlyArray<MessageKey>, at: Date) => Fails<ReadonlyArray<MessageRow>>
    /**
     * At most `limit` messages not yet erased whose status has been final for longer than their
     * organisation's retention at `at` (its own, else `defaultDays`), oldest first per
     * organisation, locked for the caller's transaction; those another transaction holds are skipped.
     */
    readonly expired: (defaultDays: number | undefined, at: Date, limit: number) => Fails<ReadonlyArray<MessageKey>>
    /** How many messages `expired` would find without a limit: the retention backlog. */
    readonly expiredCount: (defaultDays: number | undefined, at: Date) => Fails<number>
    /** The statuses not final, and the backlog of messages due by `at`, counted over partial indexes. */
    readonly inFlightCounts: (at: Date) => Fails<InFlightCounts>
    /** Messages in each final status (reads every message). */
    readonly finalCounts: Fails<ReadonlyArray<{ readonly status: MessageStatus; readonly n: number }>>
  }
>()("sms/MessageStore") {
  static readonly layer = Layer.effect(
    MessageStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const organisations = organisationFragments(sql)
      const outbox = webhookOutbox(sql)
      const { batchCheck, completeBatches } = batchCompletion(sql)
      const packed = packedFragments(sql)

      const insert = Effect.fn("MessageStore.insert")(function* (
        organisationId: string,
        messages: ReadonlyArray<NewMessage>,
        at: Date
      ) {
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
        yield* fromDatabase(sql`WITH x AS (
          SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(id uuid, batch_id uuid, batch_position integer,
            to_number text, sender_name text, text text, segments smallint, status text, send_at timestamptz, worker_id uuid)),
        ${sharedTexts(sql, organisationId, sql`x`, sql`min(s.text)`)}
        INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text,
          segments, status, send_at, due_at, worker_id, created_at, updated_at, timeline)
        SELECT ${organisationId}, x.id, x.batch_id, x.batch_position, x.to_number, x.sender_name, CASE WHEN x.batch_id IS NULL THEN x.text END, x.segments,
          x.status, x.send_at, CASE WHEN x.status = 'scheduled' THEN coalesce(x.send_at, ${at}::timestamptz) END, x.worker_id, ${at}, ${at},
          ${sql.literal(admitted("x.status", "s.at"))}
        FROM x, (SELECT ${at}::timestamptz AS at) AS s`)
      })

      const transitionSet = Effect.fn("MessageStore.transitionSet")(function* (transitions: ReadonlyArray<Transition>) {
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
        const moved = yield* fromDatabase(sql<{ i: number; fromStatus: MessageStatus } & BatchCheck>`WITH x AS (
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
            claim_until = NULL,
            timeline = ${sql.literal(appended("m.timeline", "x.to_status", "x.source", "x.at"))}
          FROM old JOIN x ON x.i = old.i
          WHERE m.organisation_id = old.organisation_id AND m.id = old.id
          RETURNING m.organisation_id, m.id, old.status AS from_status, x.to_status, x.source, x.at, x.i, ${sql.literal(movedColumns("m"))}),
        ${outbox.messageEvents("u")}
        SELECT i, from_status, ${batchCheck("u")} FROM u`)
        yield* fromDatabase(
          completeBatches(
            moved,
            transitions.reduce((latest, t) => (t.at > latest ? t.at : latest), new Date(0))
          )
        )
        const byIndex = new Map(moved.map((r) => [r.i, r.fromStatus]))
        return transitions.map((_, i) => byIndex.get(i))
      })

      // The rows of a message whose entries do not chain (an entry's from_status other than the
      // previous one's to_status) or have no code are left as they are: collapsing them would lose
      // what they say. Such a message still gets an empty timeline, so that it is not looked at again.
      // FOR NO KEY UPDATE: an insert into message_events (its foreign key takes KEY SHARE) never waits.
      const collapseTimelines = (before: Date, limit: number) =>
        fromDatabase(sql<MessageKey>`WITH due AS (
          SELECT organisation_id, id FROM messages
          WHERE timeline IS NULL AND status IN ${sql.literal(finalList)} AND updated_at < ${before}
          ORDER BY updated_at LIMIT ${limit}
          FOR NO KEY UPDATE SKIP LOCKED),
        entries AS (
          SELECT e.organisation_id, e.message_id, e.id, ${sql.literal(encodable("e"))}
              AND e.from_status IS NOT DISTINCT FROM lag(e.to_status) OVER (PARTITION BY e.organisation_id, e.message_id ORDER BY e.id)
              AS collapsible
          FROM message_events AS e JOIN due ON e.organisation_id = due.organisation_id AND e.message_id = due.id),
        kept AS (SELECT DISTINCT organisation_id, message_id FROM entries WHERE NOT collapsible),
        gone AS (
          DELETE FROM message_events AS e USING entries AS x
          WHERE e.organisation_id = x.organisation_id AND e.id = x.id
            AND NOT EXISTS (SELECT 1 FROM kept WHERE kept.organisation_id = x.organisation_id AND kept.message_id = x.message_id)
          RETURNING e.organisation_id, e.message_id, e.id, e.to_status, e.source, e.at),
        packed AS (
          SELECT g.organisation_id, g.message_id, string_agg(${sql.literal(packedEntry("g"))}, ''::bytea ORDER BY g.id) AS timeline
          FROM gone AS g GROUP BY g.organisation_id, g.message_id),
        collapsed AS (
          UPDATE messages AS m SET timeline = coalesce(p.timeline, ''::bytea)
          FROM due LEFT JOIN packed AS p ON p.organisation_id = due.organisation_id AND p.message_id = due.id
          WHERE m.organisation_id = due.organisation_id AND m.id = due.id
          RETURNING m.organisation_id, m.id)
        SELECT organisation_id::text AS organisation_id, id::text AS id FROM collapsed`)

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

      return MessageStore.of({
        insert,
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
        transitionSet,
        markSubmitted: (organisationId, ids, at) =>
          fromDatabase(
            sql`UPDATE messages SET submitted_at = ${at}, updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND id = ANY(${ids}::uuid[])`.pipe(Effect.asVoid)
          ),
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
        collapseTimelines,
        erase: (messages, at) =>
          messages.length === 0
            ? Effect.succeed([])
            : fromDatabase(
                Effect.tap(
                  sql<MessageRow>`WITH erased AS (
              UPDATE messages AS m
              SET to_number = '', sender_name = '', text = '', erased_at = coalesce(m.erased_at, ${at}), updated_at = ${at},
                -- what only the work on a message in flight reads goes too (it leaves their indexes)
                provider_message_id = NULL, submitted_at = NULL, due_at = NULL, verify_at = NULL, worker_id = NULL, claim_until = NULL
              FROM json_to_recordset(${JSON.stringify(messages.map((k) => ({ o: k.organisationId, i: k.id })))}::json) AS x(o uuid, i uuid)
              WHERE m.organisation_id = x.o AND m.id = x.i AND m.status IN ${sql.literal(finalList)}
              RETURNING ${sql.literal(messageColumns("m"))}),
            ${outbox.eraseMessages("erased")}
            SELECT * FROM erased`,
                  (erased) => forgetTexts(sql, erased)
                )
              ),
        expired: (defaultDays, at, limit) =>
          fromDatabase(sql<MessageKey>`WITH ${organisations.retention(defaultDays, at)}
          SELECT e.organisation_id::text, e.id::text FROM retention AS r
          CROSS JOIN LATERAL (SELECT m.organisation_id, m.id FROM messages AS m
            WHERE m.organisation_id = r.organisation_id AND m.erased_at IS NULL AND m.status IN ${sql.literal(finalList)}
              AND m.updated_at < r.cutoff
            ORDER BY m.updated_at LIMIT ${limit}
            FOR UPDATE OF m SKIP LOCKED) AS e
          LIMIT ${limit}`),
        expiredCount: (defaultDays, at) =>
          fromDatabase(
            sql<{ n: number }>`WITH ${organisations.retention(defaultDays, at)}
          SELECT count(*)::float8 AS n FROM retention AS r JOIN messages AS m ON m.organisation_id = r.organisation_id
          WHERE m.erased_at IS NULL AND m.status IN ${sql.literal(finalList)} AND m.updated_at < r.cutoff`.pipe(
              Effect.map((rows) => rows[0]?.n ?? 0)
            )
          ),
        inFlightCounts,
        finalCounts: fromDatabase(sql<{ status: MessageStatus; n: number }>`SELECT status, sum(n)::float8 AS n
        FROM (SELECT status, count(*) AS n FROM messages WHERE status IN ${sql.in(finalStatuses)} GROUP BY status
          UNION ALL ${packed.statusCounts}) AS x
        GROUP BY status`)
      })
    })
  )
}

type Fragment = Statement.Fragment

/**
 * The CTE `texts`: the text of each batch among the rows of `source` (which have `batch_id`),
 * stored once in `message_texts` (a batch admitted in parts keeps the first).
 */
const sharedTexts = (sql: SqlClient.SqlClient, organisationId: string, source: Fragment, text: Fragment) =>
  sql`texts AS (
      INSERT INTO message_texts (organisation_id, batch_id, text)
      SELECT ${organisationId}, s.batch_id, ${text} FROM ${source} AS s WHERE s.batch_id IS NOT NULL GROUP BY s.batch_id
      ON CONFLICT DO NOTHING)`

/** What a status change returns besides the row it moved: the columns the webhook outbox snapshots. */
const movedColumns = (alias: string) =>
  `${alias}.batch_id, ${alias}.to_number, ${alias}.sender_name, ${alias}.segments, ${alias}.status, ${alias}.send_at, ${alias}.delivery_time`

/** Per moved message: its batch, and whether that batch may have completed with it and someone wants to know. */
export interface BatchCheck {
  readonly batchOrganisationId: string | null
  readonly batchId: string | null
  readonly batchCheck: boolean
}

/** The distinct batches (`organisation:batch`) among `pairs` of organisation and batch (null: none), sorted. */
const batchKeys = (pairs: ReadonlyArray<readonly [string, string | null]>) =>
  [
    ...new Set(pairs.flatMap(([organisationId, batchId]) => (batchId === null ? [] : [`${organisationId}:${batchId}`])))
  ].sort()

/**
 * Locks the batches `keys` (of `batchKeys`) for `purpose` to the transaction's end, in key order:
 * a statement run after it sees every change committed by the transactions that held one before.
 */
const lockBatches = (sql: SqlClient.SqlClient, purpose: string, keys: ReadonlyArray<string>) =>
  sql`SELECT pg_advisory_xact_lock(hashtext(${purpose} || ':' || k)) FROM unnest(${keys}::text[]) AS k ORDER BY k`

/**
 * The batches' texts (`message_texts`) that no member needs any more: every member erased. Two
 * transactions erasing members of one batch would each see the other's not erased yet; so the
 * batches are locked first, as for their completion below.
 */
const forgetTexts = (sql: SqlClient.SqlClient, erased: ReadonlyArray<MessageRow>) => {
  const keys = batchKeys(erased.map((m) => [m.organisationId, m.batchId]))
  return keys.length === 0
    ? Effect.void
    : Effect.andThen(
        lockBatches(sql, "batch-text", keys),
        sql`DELETE FROM message_texts AS t
    USING unnest(${keys}::text[]) AS k
    WHERE t.organisation_id = split_part(k, ':', 1)::uuid AND t.batch_id = split_part(k, ':', 2)::uuid
      AND NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.organisation_id = t.organisation_id AND m.batch_id = t.batch_id
        AND m.erased_at IS NULL)`
      )
}

/**
 * `batch.completed` (docs/decisions.md#webhooks), written with the change that makes a batch's last
 * member final. Two members finishing in concurrent transactions would each see the other not
 * final yet; so the batches are locked (an advisory lock held to the transaction's end) and
 * counted in a statement after the lock, which sees every change committed before it.
 */
const batchCompletion = (sql: SqlClient.SqlClient) => ({
  batchCheck: (moved: string) =>
    sql.literal(`${moved}.organisation_id::text AS batch_organisation_id, ${moved}.batch_id::text AS batch_id, (${moved}.batch_id IS NOT NULL AND ${moved}.status IN ${finalList}
      AND ${webhookSubscribed(`${moved}.organisation_id`, "'batch.completed'")}) AS batch_check`),
  completeBatches: (checked: ReadonlyArray<BatchCheck>, at: Date) => {
    const keys = batchKeys(
      checked.flatMap((c) =>
        c.batchCheck && c.batchOrganisationId !== null ? [[c.batchOrganisationId, c.batchId]] : []
      )
    )
    if (keys.length === 0) return Effect.void
    const batches = keys.map((k) => ({ organisation_id: k.slice(0, 36), batch_id: k.slice(37) }))
    return Effect.gen(function* () {
      yield* lockBatches(sql, "batch", keys)
      // each batch's members through the index that leads with (organisation_id, batch_id)
      yield* sql`WITH done AS (
          SELECT b.organisation_id, b.batch_id FROM json_to_recordset(${JSON.stringify(batches)}::json) AS b(organisation_id uuid, batch_id uuid)
          WHERE NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.organisation_id = b.organisation_id AND m.batch_id = b.batch_id
            AND m.status NOT IN ${sql.literal(finalList)})),
        ${webhookOutbox(sql).batchEvents("done", at)}
        SELECT 1`
    })
  }
})

/** Fragments of messages for statements composed elsewhere (the one-statement admission, receipts). */
export const messageFragments = (sql: SqlClient.SqlClient) => ({
  /**
   * The CTEs `ins` (messages inserted from `source`, a query giving `id, batch_id, batch_position,
   * to_number, sender_name, status, send_at, worker_id` per message, each with the timeline's
   * admission entry) and `texts` (the text of their batch, if they are one's members).
   */
  insert: (organisationId: string, text: string, segments: number, source: Fragment, at: Date) =>
    sql`ins AS (
        INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text, segments, status,
          send_at, due_at, worker_id, created_at, updated_at, timeline)
        SELECT ${organisationId}, s.id, s.batch_id, s.batch_position, s.to_number, s.sender_name,
          CASE WHEN s.batch_id IS NULL THEN ${text}::text END, ${segments}, s.status,
          s.send_at, CASE WHEN s.status = 'scheduled' THEN coalesce(s.send_at, t.at) END, s.worker_id, t.at, t.at,
          ${sql.literal(admitted("s.status", "t.at"))}
        FROM (${source}) AS s, (SELECT ${at}::timestamptz AS at) AS t
        RETURNING organisation_id, id, status, batch_id),
      ${sharedTexts(sql, organisationId, sql`ins`, sql`${text}::text`)}`,
  /**
   * A lateral subquery giving the newest `accepted` message with provider ref `ref` (and number
   * `recipient`, unless it is null) as `organisation_id, id, accepted_at`, locked.
   *
   * The messages with the ref are found first, by the ref's index alone (`OFFSET 0` keeps the
   * status test and the order out of that subquery): with statistics taken before a drain (no
   * message accepted yet), the planner otherwise walked the whole `messages_accepted` index
   * backwards for each receipt, 900 pages a receipt at 30,000 accepted.
   */
  newestAccepted: (ref: Fragment, recipient: Fragment) =>
    sql`SELECT organisation_id, id, accepted_at FROM (
        SELECT organisation_id, id, status, to_number, created_at, updated_at AS accepted_at FROM messages
        WHERE provider_message_id = ${ref} OFFSET 0) AS c
      WHERE status = 'accepted' AND (${recipient} IS NULL OR to_number = ${recipient})
      ORDER BY accepted_at DESC, created_at DESC, id DESC LIMIT 1
      FOR UPDATE`,
  /** Whether a message to `recipient` still waits for an outcome (its acceptance may be settling, or its answer was lost). */
  inFlightTo: (recipient: Fragment) =>
    sql`EXISTS (SELECT 1 FROM messages AS f WHERE f.to_number = ${recipient} AND f.status IN ('processing', 'unknown'))`,
  /** Whether a message has provider ref `ref` (and number `recipient`, unless null): with none accepted, all are final. */
  hasRef: (ref: Fragment, recipient: Fragment) =>
    sql`EXISTS (SELECT 1 FROM messages AS f WHERE f.provider_message_id = ${ref} AND (${recipient} IS NULL OR f.to_number = ${recipient}))`,
  /**
   * The CTEs `u` (each row of `applied`, a CTE of `organisation_id, message_id, outcome,
   * occurred_at, accepted_at`, moves its accepted message to the outcome, delivered at the
   * receipt's time but never before its acceptance), `e` (their timeline entries) and the
   * webhook events of the changes (`webhookOutbox`).
   */
  applyReceipts: (applied: string, at: Date) =>
    sql`u AS (
        UPDATE messages AS m SET status = a.outcome, delivery_time = greatest(a.occurred_at, a.accepted_at), updated_at = r.at,
          timeline = ${sql.literal(appended("m.timeline", "a.outcome", "'receipt'", "r.at"))}
        FROM ${sql(applied)} AS a, (SELECT ${at}::timestamptz AS at) AS r
        WHERE m.organisation_id = a.organisation_id AND m.id = a.message_id
        RETURNING m.organisation_id, m.id, a.outcome, r.at, ${sql.literal(movedColumns("m"))}),
      ${webhookOutbox(sql).messageEvents("u")}`,
  /** The columns that tell, per row of the CTE `u` of `applyReceipts`, whether its batch may have just completed. */
  batchCheck: (moved: string) => batchCompletion(sql).batchCheck(moved),
  /** Writes the `batch.completed` events of the batches checked that did complete; run it in the transaction of the change. */
  completeBatches: (checked: ReadonlyArray<BatchCheck>, at: Date) => batchCompletion(sql).completeBatches(checked, at),
  /** The statement part that makes the unknown messages without a provider id to the numbers of `recipients` (a query) due for verification at `at`. */
  verifyOrphansNow: (recipients: Fragment, at: Date) =>
    sql`UPDATE messages AS m SET verify_at = ${at}
      WHERE m.status = 'unknown' AND m.provider_message_id IS NULL AND (m.verify_at IS NULL OR m.verify_at > ${at})
        AND m.to_number IN (${recipients})`,
  /**
   * Unknown or processing messages without a provider id to `recipient` whose submission window
   * (`submitted_at` to the minute, then `windowAfter` later, give or take `skew`) holds
   * `submittedAt`, other than `except` (`organisation_id, id`), as an EXISTS predicate.
   */
  otherOrphanFits: (
    recipient: Fragment,
    submittedAt: Fragment,
    except: { readonly organisationId: Fragment; readonly id: Fragment },
    skew: string,
    windowAfter: string
  ) =>
    sql`EXISTS (SELECT 1 FROM messages AS m
      WHERE m.to_number = ${recipient} AND m.status IN ('processing', 'unknown')
        AND m.provider_message_id IS NULL AND m.submitted_at IS NOT NULL
        AND NOT (m.organisation_id = ${except.organisationId} AND m.id = ${except.id})
        AND ${submittedAt} BETWEEN date_trunc('minute', m.submitted_at) - ${skew}::interval AND m.submitted_at + ${windowAfter}::interval)`
})
