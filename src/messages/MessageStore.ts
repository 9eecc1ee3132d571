/**
 * The table of messages with their timelines (`messages`), owned here, with the text of each
 * batch, stored once for its members (`message_texts`), and the timeline rows of an upgraded
 * database (`message_events`, no longer written). Every status change after admission
 * goes through `transitionSet` (or a statement composed from MessageFragments.ts), which moves each
 * row only from its expected states and appends its timeline entry to the row in the same
 * statement (CompactTimeline.ts); the caller's transaction makes it atomic with the ledger. The
 * rows an upgraded database still holds for its finished messages are collapsed into their
 * message's row by compaction a day after it became final (`collapseTimelines`); `timeline` reads
 * both. This file holds the service and its writes (admission, status changes, compaction,
 * retention and erasure); its reads are MessageReads.ts, a batch's completion BatchCompletion.ts,
 * the SQL they share MessageSql.ts. What dispatch, verification and recovery claim is in
 * MessageQueueStore.ts.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import { canTransition, type MessageStatus } from "../domain/MessageStatus.ts"
import { organisationFragments } from "../organisations/OrganisationStore.ts"
import { webhookOutbox } from "../webhooks/WebhookStore.ts"
import { type BatchCheck, batchCompletion, batchKeys, lockBatches } from "./BatchCompletion.ts"
import { appended, encodable, entry, type EventSource, packedEntry } from "./CompactTimeline.ts"
import { type MessageReads, messageReads } from "./MessageReads.ts"
import type { MessageRow } from "./MessageRow.ts"
import { finalList, messageColumns, movedColumns, sharedTexts } from "./MessageSql.ts"

export type { EventSource } from "./CompactTimeline.ts"

export interface NewMessage {
  readonly id: string
  readonly batchId: string | null
  readonly batchPosition: number | null
  readonly toNumber: string
  readonly senderName: string
  readonly text: string
  readonly segments: number
  /** `failed` only for a batch member whose recipient opted out (its timeline's source says so). */
  readonly status: "scheduled" | "processing" | "failed"
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

/** Which message: its organisation and id. */
export interface MessageKey {
  readonly organisationId: string
  readonly id: string
}

/** The messages' store: its reads (MessageReads.ts) and its writes. */
export class MessageStore extends Context.Service<
  MessageStore,
  MessageReads & {
    /** Inserts messages of one organisation in one statement, each with its timeline's admission entry. */
    readonly insert: (organisationId: string, messages: ReadonlyArray<NewMessage>, at: Date) => Fails<void>
    /**
     * Applies a set of transitions in one statement, each with its timeline entry; a message not
     * in one of its `from` states is left alone. Returns, per transition, the status it moved from,
     * or undefined when it did not move. The caller's transaction makes it atomic with the rest.
     */
    readonly transitionSet: (transitions: ReadonlyArray<Transition>) => Fails<ReadonlyArray<MessageStatus | undefined>>
    /** Records that the message is about to be handed to the provider (after this, a crash means "unknown"). */
    readonly markSubmitted: (organisationId: string, ids: ReadonlyArray<string>, at: Date) => Fails<void>
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
  }
>()("sms/MessageStore") {
  static readonly layer = Layer.effect(
    MessageStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const organisations = organisationFragments(sql)
      const outbox = webhookOutbox(sql)
      const { batchCheck, completeBatches } = batchCompletion(sql)

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
        // a member created failed was refused for its opted-out recipient: its timeline says so
        const timeline = (source: string) => entry("x.status", source, "s.at")
        yield* fromDatabase(sql`WITH x AS (
          SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(id uuid, batch_id uuid, batch_position integer,
            to_number text, sender_name text, text text, segments smallint, status text, send_at timestamptz, worker_id uuid)),
        ${sharedTexts(sql, organisationId, sql`x`, sql`min(s.text)`)}
        INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text,
          segments, status, send_at, due_at, worker_id, created_at, updated_at, timeline)
        SELECT ${organisationId}, x.id, x.batch_id, x.batch_position, x.to_number, x.sender_name, CASE WHEN x.batch_id IS NULL THEN x.text END, x.segments,
          x.status, x.send_at, CASE WHEN x.status = 'scheduled' THEN coalesce(x.send_at, ${at}::timestamptz) END, x.worker_id, ${at}, ${at},
          ${sql.literal(timeline("CASE WHEN x.status = 'failed' THEN 'opted_out' ELSE 'admission' END"))}
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

      return MessageStore.of({
        ...messageReads(sql),
        insert,
        transitionSet,
        markSubmitted: (organisationId, ids, at) =>
          fromDatabase(
            sql`UPDATE messages SET submitted_at = ${at}, updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND id = ANY(${ids}::uuid[])`.pipe(Effect.asVoid)
          ),
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
          )
      })
    })
  )
}

/**
 * The batches' texts (`message_texts`) that no member needs any more: every member erased. Two
 * transactions erasing members of one batch would each see the other's not erased yet; so the
 * batches are locked first, as for their completion (BatchCompletion.ts).
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
