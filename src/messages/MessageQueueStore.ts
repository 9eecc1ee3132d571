/**
 * The work the background fibers take from `messages`. Claims use `FOR UPDATE SKIP LOCKED`, so
 * any number of processes can run them at once. This file holds the service and its claims of
 * due scheduled messages; the verification of unknown messages, with the provider's late answers
 * about them, is VerificationQueue.ts, and what recovery finds is AbandonedMessages.ts.
 *
 * A due scheduled message is first claimed (leased to one process for `claimLeaseMs`, still
 * `scheduled`), then started just before its submission: the move to `processing` is the one
 * exclusive step, so a message is started, and sent, by one process only, even if its claim ran
 * out. A claim that dies with its process simply expires and the message is claimed again. When
 * nothing makes a claimed message wait (no rate to keep), the claim starts it in the same
 * statement (`startNow`).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError, type Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { optedOut } from "../consent/OptOutStore.ts"
import { fromDatabase } from "../db/Statements.ts"
import { inTransaction } from "../db/Transactions.ts"
import { organisationFragments } from "../organisations/OrganisationStore.ts"
import type { Sendable } from "../provider/Provider.ts"
import { type AbandonedMessages, abandonedMessages } from "./AbandonedMessages.ts"
import type { MessageRow } from "./MessageRow.ts"
import { appended } from "./CompactTimeline.ts"
import { instantOf, messageColumns } from "./MessageSql.ts"
import { type VerificationQueue, verificationQueue } from "./VerificationQueue.ts"

/** How long a dispatcher's claim on a scheduled message lasts before another process may claim it. */
export const claimLeaseMs = 10_000

/** Why a claimed message was not started. */
export type StartRefusal = "sms_unavailable" | "sender_unavailable" | "opted_out" | "gone"

/**
 * What a claim did with a message: claimed it, to be started later (`start`), or, when asked to
 * start what it claims, started it or found why it cannot be (it stays claimed, `scheduled`).
 */
export type ClaimOutcome = "claimed" | "started" | Exclude<StartRefusal, "gone">

export interface ClaimedMessage extends MessageRow {
  readonly claim: ClaimOutcome
}

const returned = messageColumns("m")

/**
 * Whether a message's `to_number` is one this process can submit: the longest prefix matching
 * it says whether its route's bind is held here; a number no prefix serves, by anyone.
 */
const sendableNumber = (sql: SqlClient.SqlClient, sendable: Sendable): Statement.Fragment =>
  sendable._tag === "All"
    ? sql`true`
    : sql`coalesce((SELECT p.held FROM json_to_recordset(${JSON.stringify(sendable.prefixes)}::json) AS p(prefix text, held boolean)
        WHERE left(to_number, length(p.prefix)) = p.prefix ORDER BY length(p.prefix) DESC LIMIT 1), true)`

export class MessageQueueStore extends Context.Service<
  MessageQueueStore,
  {
    /**
     * Claims up to `limit` scheduled messages due at `at` for `workerId`, organisations in turn
     * (each one's earliest due first, then in admission order, batch members in their order), among
     * those it can submit (`sendable`: a route whose binds other processes hold is left to them);
     * they stay `scheduled` until started, or, with `startNow`, the claim starts them as `start`
     * does (one write of each row instead of two, for a provider that never makes a claimed
     * message wait for its turn).
     */
    readonly claimDue: (
      at: Date,
      limit: number,
      workerId: string,
      sendable: Sendable,
      startNow: boolean
    ) => Fails<ReadonlyArray<ClaimedMessage>>
    /**
     * Starts claimed messages, in one statement: each one still scheduled whose organisation has
     * SMS enabled and whose sender is active becomes `processing`, marked as handed over at `at`
     * and owned by `workerId`. Returns, per message, undefined when started or why not.
     */
    readonly start: (
      messages: ReadonlyArray<{ readonly organisationId: string; readonly id: string }>,
      at: Date,
      workerId: string
    ) => Fails<ReadonlyArray<StartRefusal | undefined>>
    /** Gives back the claims `workerId` still holds on messages it has not started (it is stopping). */
    readonly releaseClaims: (workerId: string) => Fails<void>
    /**
     * The earliest instant at which a scheduled message may be claimed: a due one not claimed at
     * `at`, when there is one; else `laterClaimable(at)`. What the dispatcher sleeps until when a
     * claim found nothing (BackgroundLoops.ts).
     */
    readonly nextClaimable: (at: Date) => Fails<Date | undefined>
    /**
     * The earliest instant after `at` at which a scheduled message may become claimable: the next
     * one to fall due, or the end of a claim on a due one (a process that died after claiming it).
     * What the test clock steps to (DueWork.ts), so that a dead process's claim is waited out in one
     * step, not a millisecond at a time.
     */
    readonly laterClaimable: (at: Date) => Fails<Date | undefined>
  } & VerificationQueue &
    AbandonedMessages
>()("sms/MessageQueueStore") {
  static readonly layer = Layer.effect(
    MessageQueueStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const organisations = organisationFragments(sql)

      /**
       * Whether the scheduled message `m` is free of claims at `at`: none was taken, or it ran out
       * before `at` (a claim until T frees its message at T plus a millisecond; `nextClaimable`).
       */
      const unclaimedAt = (at: Date) => sql`(m.claim_until IS NULL OR m.claim_until < ${at})`

      /**
       * Runs a claim in a transaction of its own, planned as it is meant to run whatever the
       * statistics say: no sort where an index gives the order (`enable_sort` off until it
       * commits), and messages reached by index only, joined row by row (`enable_hashjoin` and
       * `enable_mergejoin` off). Each organisation's earliest due messages are then read in the
       * order of messages_due_by_organisation, every partition's index merged, as many as the
       * claim takes, and the claimed rows are updated through the primary key: a claim reads about
       * what it takes. Left to its statistics, the planner sorted all of an organisation's due
       * messages at each claim whenever they said it had few (taken before a campaign's batches
       * were admitted, they price the partition holding them as nearly empty, and the partitions
       * made ahead, empty, at nothing), or hashed a whole partition to update 64 rows: each claim
       * read the whole backlog, 0.3 s with 30,000 batch members due and growing with it, while
       * another organisation's due message waited for the next claim (issue 39,
       * docs/decisions.md#fair-share-and-fleet-limits). The sorts a claim cannot do without (its
       * turns) are done all the same.
       */
      const inPlannedOrder = <A>(statement: Effect.Effect<A, SqlError.SqlError>) =>
        fromDatabase(
          inTransaction(sql)(
            Effect.andThen(
              sql`SELECT set_config('enable_sort', 'off', true), set_config('enable_hashjoin', 'off', true),
                set_config('enable_mergejoin', 'off', true)`,
              statement
            )
          )
        )

      /** The next instant after `at` a scheduled message falls due or a claim on a due one runs out, as an SQL expression. */
      const laterClaimable = (at: Date) =>
        sql`least(
        (SELECT min(due_at) FROM messages WHERE status = 'scheduled' AND due_at > ${at}),
        (SELECT min(m.claim_until) + interval '1 millisecond' FROM messages AS m
          WHERE m.status = 'scheduled' AND m.due_at <= ${at} AND NOT ${unclaimedAt(at)}))`

      /** The value of an SQL expression of one instant, if any. */
      const instant = instantOf(sql)

      /**
       * The end of a claim that starts the messages of `due` (its CTE of `organisation_id, id,
       * sender_name, to_number`, locked): each one whose organisation has SMS enabled, whose sender
       * is active and whose recipient has not opted out (docs/two-way.md)
       * becomes `processing` as `start` makes it; the others are claimed until `claimUntil`.
       * `go` is judged from `due` alone, and materialized, so that messages is joined once, to
       * `go`, by its whole key: joined in `go` with the organisation's row as well, the planner
       * could probe messages by the organisation alone and filter every one of its rows (cheap by
       * statistics taken before a campaign's batches were admitted), reading the organisation's
       * whole backlog for each claimed message: claims of 5 s with 30,000 batch members due, while
       * another organisation's due message waited for the next claim (issue 39).
       */
      const startClaimed = (at: Date, workerId: string, claimUntil: Date) => {
        return sql`, go AS MATERIALIZED (
          SELECT due.organisation_id, due.id, o.sms_enabled, coalesce(s.active, false) AS sender_active,
            o.sms_enabled AND coalesce(s.active, false)
              AND NOT ${optedOut(sql, sql`due.organisation_id`, sql`due.to_number`)} AS ok
          FROM due ${organisations.sendability("due")})
        UPDATE messages AS m SET worker_id = ${workerId},
          claim_until = CASE WHEN go.ok THEN NULL ELSE ${claimUntil}::timestamptz END,
          status = CASE WHEN go.ok THEN 'processing' ELSE m.status END,
          submitted_at = CASE WHEN go.ok THEN ${at}::timestamptz ELSE m.submitted_at END,
          updated_at = CASE WHEN go.ok THEN ${at}::timestamptz ELSE m.updated_at END,
          timeline = CASE WHEN go.ok THEN ${sql.literal(appended("m.timeline", "'processing'", "'dispatch'", "t.at"))} ELSE m.timeline END
        FROM go, (SELECT ${at}::timestamptz AS at) AS t
        WHERE m.organisation_id = go.organisation_id AND m.id = go.id
        RETURNING ${sql.literal(returned)},
          CASE WHEN go.ok THEN 'started' WHEN NOT go.sms_enabled THEN 'sms_unavailable'
            WHEN NOT go.sender_active THEN 'sender_unavailable' ELSE 'opted_out' END AS claim`
      }

      return MessageQueueStore.of({
        // Immediate sends handed over by a process without their route's bind (BindHolderRelay.ts: due now,
        // no send_at) come first, ahead of any due scheduled message (docs/decisions.md#fair-share-and-fleet-limits). Then
        // fair share: every organisation with due work gets a turn in each claim. The organisations
        // holding scheduled messages are walked one index probe each (a loose index scan of
        // messages_due_by_organisation, which gives each one's earliest due time too); each one
        // whose earliest is due gives its earliest due messages not claimed, an equal share of the
        // claim, then those with more fill what the others left (an organisation whose due messages
        // others hold takes a share it leaves to them);
        // rows are locked with SKIP LOCKED (another process's claim takes the next ones) and the
        // claim takes them round robin (the first of each organisation, then the second...): one
        // organisation's backlog never pushes another's message behind it.
        claimDue: (at, limit, workerId, sendable, startNow) => {
          // the claim's size written into the statement, not bound: the planner then knows the claim
          // is small and joins it to messages by key; with a parameter, its generic plan took the
          // claim for a tenth of the table and hashed all of messages at every claim
          const size = sql.literal(String(Math.max(0, Math.trunc(limit))))
          const unclaimedDue = sql`m.status = 'scheduled' AND m.due_at <= ${at} AND ${unclaimedAt(at)}
          AND ${sendableNumber(sql, sendable)}`
          const earliest = (n: Statement.Fragment, except: Statement.Fragment) => sql`CROSS JOIN LATERAL (
            SELECT m.organisation_id, m.id, m.due_at, m.created_at, m.batch_position, m.sender_name, m.to_number FROM messages AS m
            WHERE m.organisation_id = due_orgs.organisation_id AND ${unclaimedDue} AND m.send_at IS NOT NULL ${except}
            ORDER BY m.due_at, m.created_at, m.batch_position
            LIMIT ${n}
            FOR UPDATE OF m SKIP LOCKED) AS c`
          const claimUntil = new Date(at.getTime() + claimLeaseMs)
          return inPlannedOrder(sql<ClaimedMessage>`WITH RECURSIVE handed AS (
            SELECT m.organisation_id, m.id, m.due_at, m.sender_name, m.to_number FROM messages AS m
            WHERE ${unclaimedDue} AND m.send_at IS NULL
            ORDER BY m.due_at LIMIT ${size}
            FOR UPDATE OF m SKIP LOCKED),
          orgs AS (
            (SELECT organisation_id, due_at FROM messages WHERE status = 'scheduled' ORDER BY organisation_id, due_at LIMIT 1)
            UNION ALL
            SELECT n.organisation_id, n.due_at FROM orgs CROSS JOIN LATERAL (
              SELECT m.organisation_id, m.due_at FROM messages AS m
              WHERE m.status = 'scheduled' AND m.organisation_id > orgs.organisation_id
              ORDER BY m.organisation_id, m.due_at LIMIT 1) AS n),
          due_orgs AS (SELECT organisation_id FROM orgs WHERE due_at <= ${at}),
          share AS (SELECT ceil(greatest(${size} - (SELECT count(*) FROM handed), 0)::numeric / greatest(count(*), 1))::integer AS per
            FROM due_orgs),
          shares AS (SELECT c.* FROM due_orgs ${earliest(sql`(SELECT per FROM share)`, sql``)}),
          rest AS (SELECT c.* FROM due_orgs ${earliest(
            sql`greatest(${size} - (SELECT count(*) FROM handed) - (SELECT count(*) FROM shares), 0)`,
            sql`AND m.id NOT IN (SELECT id FROM shares)`
          )}),
          due AS (
            SELECT organisation_id, id, sender_name, to_number FROM (
              SELECT organisation_id, id, due_at, sender_name, to_number, 0 AS turn FROM handed
              UNION ALL
              SELECT organisation_id, id, due_at, sender_name, to_number,
                row_number() OVER (PARTITION BY organisation_id ORDER BY due_at, created_at, batch_position) AS turn
              FROM (SELECT * FROM shares UNION ALL SELECT * FROM rest) AS locked) AS t
            ORDER BY turn, due_at LIMIT ${size})
          ${
            startNow
              ? startClaimed(at, workerId, claimUntil)
              : sql`UPDATE messages AS m SET worker_id = ${workerId}, claim_until = ${claimUntil}
            FROM due WHERE m.organisation_id = due.organisation_id AND m.id = due.id
            RETURNING ${sql.literal(returned)}, 'claimed' AS claim`
          }`)
        },
        start: (messages, at, workerId) =>
          Effect.gen(function* () {
            if (messages.length === 0) return []
            const rows = messages.map((m) => ({ organisation_id: m.organisationId, id: m.id }))
            const found = yield* fromDatabase(sql<{
              organisationId: string
              id: string
              smsEnabled: boolean
              senderActive: boolean
              optedOut: boolean
            }>`WITH x AS (
              SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(organisation_id uuid, id uuid)),
            -- locked by their key alone, then judged: messages is never probed by organisation (startClaimed)
            locked AS MATERIALIZED (
              SELECT m.organisation_id, m.id, m.sender_name, m.to_number
              FROM messages AS m
              JOIN x ON x.organisation_id = m.organisation_id AND x.id = m.id
              WHERE m.status = 'scheduled'
              ORDER BY m.organisation_id, m.id
              FOR UPDATE OF m),
            c AS (
              SELECT locked.organisation_id, locked.id, o.sms_enabled, coalesce(s.active, false) AS sender_active,
                ${optedOut(sql, sql`locked.organisation_id`, sql`locked.to_number`)} AS opted_out
              FROM locked ${organisations.sendability("locked")}),
            u AS (
              UPDATE messages AS m SET status = 'processing', submitted_at = t.at, updated_at = t.at,
                worker_id = ${workerId}, claim_until = NULL,
                timeline = ${sql.literal(appended("m.timeline", "'processing'", "'dispatch'", "t.at"))}
              FROM c, (SELECT ${at}::timestamptz AS at) AS t
              WHERE m.organisation_id = c.organisation_id AND m.id = c.id AND c.sms_enabled AND c.sender_active
                AND NOT c.opted_out
              RETURNING m.organisation_id, m.id)
            SELECT organisation_id::text, id::text, sms_enabled, sender_active, opted_out FROM c`)
            const byKey = new Map(found.map((f) => [`${f.organisationId}/${f.id}`, f]))
            return messages.map((m): StartRefusal | undefined => {
              const f = byKey.get(`${m.organisationId}/${m.id}`)
              return f === undefined
                ? "gone"
                : !f.smsEnabled
                  ? "sms_unavailable"
                  : !f.senderActive
                    ? "sender_unavailable"
                    : f.optedOut
                      ? "opted_out"
                      : undefined
            })
          }),
        releaseClaims: (workerId) =>
          fromDatabase(
            sql`UPDATE messages SET worker_id = NULL, claim_until = NULL
          WHERE worker_id = ${workerId} AND status = 'scheduled'`.pipe(Effect.asVoid)
          ),
        // a due message not claimed comes first, and is the earliest (the others are after `at`):
        // COALESCE reads the claimed due ones only when there is none, as the dispatcher asks
        // while a backlog drains
        nextClaimable: (at) =>
          instant(sql`coalesce(
          (SELECT min(m.due_at) FROM messages AS m WHERE m.status = 'scheduled' AND m.due_at <= ${at} AND ${unclaimedAt(at)}),
          ${laterClaimable(at)})`),
        laterClaimable: (at) => instant(laterClaimable(at)),
        ...verificationQueue(sql),
        ...abandonedMessages(sql)
      })
    })
  )
}
