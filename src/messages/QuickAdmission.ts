/**
 * Admission in one round trip for the common case: the organisation can send with that sender,
 * the Idempotency-Key is new, and one lot of its earliest validity covers the whole reservation. One
 * statement then claims the key (with its answer when it is known), inserts the message(s) and
 * their timeline, reserves from that lot and writes the holds and entries. The same statement
 * reads a key already stored, so a replay is one round trip too.
 *
 * It composes a statement over several modules' tables on purpose (docs/architecture.md lists
 * every such statement), each from the fragments its owner exports: the sending profile (OrganisationStore), the key (IdempotencyStore),
 * the messages (MessageFragments), the lot and the reservation (LedgerStore), the opt-out list (OptOutStore); a batch's own row comes
 * from its caller (BatchStore `insertOnClaim`), since batches are built on messages.
 * The lot is locked as the statement reads it, so a concurrent admission cannot take its credits
 * between the read and the reservation.
 *
 * Anything else is left to the general path, the admission transaction (Messages.ts,
 * Batches.ts), which explains refusals and draws from several lots: `Fallback`.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { idempotencyFragments, type KeyRow } from "../idempotency/IdempotencyStore.ts"
import { ledgerFragments } from "../ledger/LedgerStore.ts"
import { organisationFragments } from "../organisations/OrganisationStore.ts"
import { optedOutAny } from "../consent/OptOutStore.ts"
import { messageFragments } from "./MessageFragments.ts"

/** What the one statement did. */
export type QuickResult =
  /** Admitted; the sender the message(s) carry (the requested one, or the organisation's default). */
  | { readonly _tag: "Admitted"; readonly senderName: string }
  /** The key was stored already: judge it (Idempotency.judgeStoredKey). */
  | { readonly _tag: "Existing"; readonly row: KeyRow }
  /** Not the common case: run the general path. */
  | { readonly _tag: "Fallback" }

interface Common {
  readonly organisationId: string
  readonly key: string
  readonly fingerprint: string
  /** The requested sender name, or undefined for the organisation's default. */
  readonly senderName: string | undefined
  readonly text: string
  readonly segments: number
  readonly at: Date
  /** The UTC day credit expiry is judged against. */
  readonly today: string
}

export interface QuickMessage extends Common {
  readonly id: string
  readonly to: string
  readonly sendAt: Date | null
  /**
   * An immediate send this process cannot submit (another holds its route's binds): stored
   * `scheduled`, due now, for a holder's dispatcher; its key stays in progress until settled.
   */
  readonly relayed: boolean
  /** Immediate sends: the process that goes on to submit it. */
  readonly workerId: string | null
  /**
   * The answer when it is known before the statement (a scheduled message's 202), built with
   * `unresolvedSender` when no sender was requested: the statement writes the one it resolved.
   */
  readonly answer: Answer | undefined
}

export interface QuickBatch extends Common {
  readonly batchId: string
  /** The CTE `bt` inserting the batch's row once the key `k` is claimed (BatchStore `insertOnClaim`). */
  readonly batchRow: Statement.Fragment
  readonly members: ReadonlyArray<{ readonly id: string; readonly to: string }>
  readonly sendAt: Date
  readonly answer: Answer
}

/**
 * The sender name a message answer is built with when the organisation's default sender is only
 * resolved by the statement: a string no sender name can be (sender names are letters, digits and
 * spaces), which the statement replaces, as a JSON string, by the sender it resolved.
 */
export const unresolvedSender = "\u0000"

interface Row extends Partial<KeyRow> {
  readonly claimed: number
  readonly senderName: string | null
}

const resultOf = (rows: ReadonlyArray<Row>): QuickResult => {
  const row = rows[0]!
  if (row.claimed > 0) return { _tag: "Admitted", senderName: row.senderName! }
  if (row.fingerprint !== undefined && row.fingerprint !== null) return { _tag: "Existing", row: row as KeyRow }
  return { _tag: "Fallback" }
}

export class QuickAdmission extends Context.Service<
  QuickAdmission,
  {
    /** Admits one message in one statement, or says why not. */
    readonly message: (m: QuickMessage) => Effect.Effect<QuickResult, DatabaseUnavailable>
    /** Admits a batch (its row, every member, one reservation) in one statement, or says why not. */
    readonly batch: (b: QuickBatch) => Effect.Effect<QuickResult, DatabaseUnavailable>
  }
>()("sms/QuickAdmission") {
  static readonly layer = Layer.effect(
    QuickAdmission,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const organisations = organisationFragments(sql)
      const keys = idempotencyFragments(sql)
      const messages = messageFragments(sql)
      const ledger = ledgerFragments(sql)

      /** The reads the statement decides on: the sending profile, the key if stored, a lot of the earliest validity covering `credits`. */
      const reads = (c: Common, route: "messages" | "message-batches", credits: number) =>
        sql`${organisations.sendingProfile(c.organisationId, c.senderName)},
        ${keys.existing(c.organisationId, route, c.key)},
        ${ledger.lotFor(c.organisationId, c.today, credits)}`

      /**
       * Whether the key may be claimed by this statement: sendable, new, a lot covers the
       * reservation, and no recipient (`recipients`, an SQL array) opted out: one lookup by key
       * each (docs/two-way.md); the general path explains a refusal.
       */
      const claimable = (organisationId: string, recipients: ReadonlyArray<string>) =>
        sql`EXISTS (SELECT 1 FROM org WHERE org.sms_enabled AND org.sender_active) AND NOT EXISTS (SELECT 1 FROM existing)
        AND ${ledger.lotCovers}
        AND NOT ${optedOutAny(sql, sql`${organisationId}::uuid`, sql`${recipients}::text[]`)}`

      /** The statement's answer: whether it claimed, the sender, the stored key. */
      const outcome = sql`SELECT (SELECT count(*) FROM k)::integer AS claimed, (SELECT sender_name FROM org) AS sender_name,
        e.fingerprint, e.state, e.response_status, e.response_body, e.response_location, e.erased
      FROM (SELECT 1) AS one LEFT JOIN existing AS e ON true`

      const bodyWithSender = (body: string | null): Statement.Fragment =>
        body === null
          ? sql`NULL::text`
          : sql`replace(${body}::text, ${JSON.stringify(unresolvedSender)}, to_json((SELECT sender_name FROM org))::text)`

      const message = (m: QuickMessage) => {
        const status = m.sendAt === null && !m.relayed ? "processing" : "scheduled"
        const key = {
          organisationId: m.organisationId,
          route: "messages" as const,
          key: m.key,
          fingerprint: m.fingerprint,
          messageId: m.id,
          ...(m.answer === undefined ? {} : { answer: m.answer })
        }
        const member = sql`SELECT k.message_id AS id, NULL::uuid AS batch_id, NULL::integer AS batch_position, ${m.to}::text AS to_number,
        org.sender_name, ${status}::text AS status, ${m.sendAt}::timestamptz AS send_at, ${m.workerId}::uuid AS worker_id FROM k, org`
        return fromDatabase(
          sql<Row>`WITH ${reads(m, "messages", m.segments)},
        ${keys.claim(key, m.at, bodyWithSender(m.answer === undefined ? null : JSON.stringify(m.answer.body)), claimable(m.organisationId, [m.to]))},
        ${messages.insert(m.organisationId, m.text, m.segments, member, m.at)},
        ${ledger.reserveFromLot(m.organisationId, m.segments, m.segments, "k", "ins", m.at)}
        ${outcome}`.pipe(Effect.map(resultOf), Effect.withSpan("QuickAdmission.message"))
        )
      }

      const batch = (b: QuickBatch) => {
        const credits = b.members.length * b.segments
        const members = JSON.stringify(b.members.map((x, i) => ({ id: x.id, to_number: x.to, position: i + 1 })))
        const key = {
          organisationId: b.organisationId,
          route: "message-batches" as const,
          key: b.key,
          fingerprint: b.fingerprint,
          batchId: b.batchId,
          answer: b.answer
        }
        const member = sql`SELECT x.id, k.batch_id, x.position AS batch_position, x.to_number, org.sender_name, 'scheduled'::text AS status,
          ${b.sendAt}::timestamptz AS send_at, NULL::uuid AS worker_id
        FROM k, org, json_to_recordset(${members}::json) AS x(id uuid, to_number text, position integer)`
        return fromDatabase(
          sql<Row>`WITH ${reads(b, "message-batches", credits)},
        ${keys.claim(
          key,
          b.at,
          sql`${JSON.stringify(b.answer.body)}::text`,
          claimable(
            b.organisationId,
            b.members.map((x) => x.to)
          )
        )},
        ${b.batchRow},
        ${messages.insert(b.organisationId, b.text, b.segments, member, b.at)},
        ${ledger.reserveFromLot(b.organisationId, credits, b.segments, "k", "ins", b.at)}
        ${outcome}`.pipe(Effect.map(resultOf), Effect.withSpan("QuickAdmission.batch"))
        )
      }

      return QuickAdmission.of({ message, batch })
    })
  )
}
