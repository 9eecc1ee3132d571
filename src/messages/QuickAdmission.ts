/**
 * Admission in one round trip for the common case: the organisation can send with that sender,
 * the Idempotency-Key is new, and its first valid credit lot covers the whole reservation. One
 * statement then claims the key (with its answer when it is known), inserts the message(s) and
 * their timeline, reserves from that lot and writes the holds and entries; the lot row is locked
 * only for that statement and its commit. The same statement reads a key already stored, so a
 * replay is one round trip too.
 *
 * Anything else is left to the general path, the admission transaction (Messages.ts,
 * Batches.ts), which explains refusals and draws from several lots: `Fallback`. When a
 * concurrent admission takes the lot's last credits between the statement's read and its
 * update, the statement aborts itself (SQLSTATE SMS01, nothing written) and also falls back.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { sqlStateOf } from "../db/SqlErrors.ts"
import type { Answer } from "../idempotency/Answer.ts"
import type { KeyRow, Route } from "../idempotency/Idempotency.ts"

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
  /** Immediate sends: the process that goes on to submit it. */
  readonly workerId: string | null
  /**
   * The answer when it is known before the statement (a scheduled message's 202), its body's
   * `sender_name` written as null: the statement writes the sender it resolved in its place.
   */
  readonly answer: Answer | undefined
}

export interface QuickBatch extends Common {
  readonly batchId: string
  readonly members: ReadonlyArray<{ readonly id: string; readonly to: string }>
  readonly sendAt: Date
  readonly answer: Answer
}

/** Where a message answer's sender name goes: its body is written with `"sender_name":null`. */
export const senderPlaceholder = "\"sender_name\":null"

export class QuickAdmission extends Context.Service<QuickAdmission, {
  /** Admits one message in one statement, or says why not. */
  readonly message: (m: QuickMessage) => Effect.Effect<QuickResult, SqlError.SqlError>
  /** Admits a batch (its row, every member, one reservation) in one statement, or says why not. */
  readonly batch: (b: QuickBatch) => Effect.Effect<QuickResult, SqlError.SqlError>
}>()("sms/QuickAdmission") {
  static readonly layer = Layer.effect(QuickAdmission, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The sending profile, the key if stored, the first valid lot with free credits: the reads the statement decides on. */
    const reads = (c: Common, route: Route) =>
      sql`org AS (
          SELECT o.sms_enabled, coalesce(${c.senderName ?? null}::text, o.default_sender_name) AS sender_name,
            coalesce(s.active, false) AS sender_active
          FROM organisations AS o
          LEFT JOIN senders AS s ON s.organisation_id = o.id AND s.name = coalesce(${c.senderName ?? null}::text, o.default_sender_name)
          WHERE o.id = ${c.organisationId}),
        existing AS (
          SELECT k.fingerprint, k.state, k.response_status, k.response_body, k.response_location,
            (m.erased_at IS NOT NULL) AS erased
          FROM idempotency_keys AS k
          LEFT JOIN messages AS m ON m.organisation_id = k.organisation_id AND m.id = k.message_id
          WHERE k.organisation_id = ${c.organisationId} AND k.route = ${route} AND k.key = ${c.key}),
        lot AS (
          SELECT id, amount - reserved - consumed AS free FROM credit_lots
          WHERE organisation_id = ${c.organisationId} AND (valid_until IS NULL OR valid_until >= ${c.today}::date)
            AND amount - reserved - consumed > 0
          ORDER BY valid_until ASC NULLS LAST, id ASC LIMIT 1)`

    /** Whether the key may be claimed by this statement: sendable, new, and the first lot covers `credits`. */
    const claimable = (credits: number) =>
      sql`org.sms_enabled AND org.sender_active AND NOT EXISTS (SELECT 1 FROM existing)
        AND EXISTS (SELECT 1 FROM lot WHERE lot.free >= ${credits})`

    /** The reservation from the first lot, taken only once the key is claimed; re-checked under the row lock. */
    const reserve = (c: Common, credits: number) =>
      sql`r AS (
          UPDATE credit_lots AS l SET reserved = l.reserved + ${credits}
          FROM lot
          WHERE l.organisation_id = ${c.organisationId} AND l.id = lot.id AND EXISTS (SELECT 1 FROM k)
            AND l.amount - l.reserved - l.consumed >= ${credits}
          RETURNING l.id)`

    /** The statement's answer: what it claimed and reserved, the sender, the stored key; aborts when it claimed without reserving. */
    const outcome = sql`SELECT (SELECT count(*) FROM k)::integer AS claimed, (SELECT count(*) FROM r)::integer AS reserved,
        (SELECT sender_name FROM org) AS sender_name,
        CASE WHEN (SELECT count(*) FROM k) > 0 AND NOT EXISTS (SELECT 1 FROM r)
          THEN sms_abort('the credit lot was taken by a concurrent admission') END AS aborted,
        e.fingerprint, e.state, e.response_status, e.response_body, e.response_location, e.erased
      FROM (SELECT 1) AS one LEFT JOIN existing AS e ON true`

    interface Row extends Partial<KeyRow> {
      readonly claimed: number
      readonly reserved: number
      readonly senderName: string | null
    }

    const resultOf = (rows: ReadonlyArray<Row>): QuickResult => {
      const row = rows[0]!
      if (row.claimed > 0) return { _tag: "Admitted", senderName: row.senderName! }
      if (row.fingerprint !== undefined && row.fingerprint !== null) return { _tag: "Existing", row: row as KeyRow }
      return { _tag: "Fallback" }
    }

    /** A concurrent admission took the lot's last credits: the statement undid itself; the general path decides. */
    const fallbackOnRace = (effect: Effect.Effect<QuickResult, SqlError.SqlError>) =>
      Effect.catchIf(effect, (e) => sqlStateOf(e) === "SMS01", () => Effect.succeed<QuickResult>({ _tag: "Fallback" }))

    const bodyWithSender = (body: string | null) =>
      body === null
        ? sql`NULL::text`
        : sql`replace(${body}::text, ${senderPlaceholder}, '"sender_name":' || to_json(org.sender_name)::text)`

    const message = (m: QuickMessage) => {
      const status = m.sendAt === null ? "processing" : "scheduled"
      return sql<Row>`WITH ${reads(m, "messages")},
        k AS (
          INSERT INTO idempotency_keys (organisation_id, route, key, fingerprint, state, message_id,
            response_status, response_body, response_location, created_at, updated_at)
          SELECT ${m.organisationId}, 'messages', ${m.key}, ${m.fingerprint}, ${m.answer === undefined ? "in_progress" : "done"},
            ${m.id}, ${m.answer?.status ?? null}::integer,
            ${bodyWithSender(m.answer === undefined ? null : JSON.stringify(m.answer.body))},
            ${m.answer?.location ?? null}::text, ${m.at}, ${m.at}
          FROM org WHERE ${claimable(m.segments)}
          ON CONFLICT DO NOTHING
          RETURNING message_id),
        ins AS (
          INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments, status, send_at, due_at,
            worker_id, created_at, updated_at)
          SELECT ${m.organisationId}, k.message_id, ${m.to}, org.sender_name, ${m.text}, ${m.segments}, ${status},
            ${m.sendAt}::timestamptz, ${status === "scheduled" ? m.sendAt : null}::timestamptz, ${m.workerId}::uuid, ${m.at}, ${m.at}
          FROM k, org
          RETURNING organisation_id, id),
        ev AS (
          INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
          SELECT organisation_id, id, NULL, ${status}, 'admission', ${m.at} FROM ins),
        ${reserve(m, m.segments)},
        h AS (
          INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
          SELECT ${m.organisationId}, ${m.id}, r.id, ${m.segments}, 'pending', ${m.at} FROM r),
        ce AS (
          INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
          SELECT ${m.organisationId}, r.id, ${m.id}, 'reserve', ${m.segments}, ${m.at} FROM r)
        ${outcome}`.pipe(Effect.map(resultOf), fallbackOnRace, Effect.withSpan("QuickAdmission.message"))
    }

    const batch = (b: QuickBatch) => {
      const credits = b.members.length * b.segments
      const members = JSON.stringify(b.members.map((x, i) => ({ id: x.id, to_number: x.to, position: i + 1 })))
      return sql<Row>`WITH ${reads(b, "message-batches")},
        k AS (
          INSERT INTO idempotency_keys (organisation_id, route, key, fingerprint, state, batch_id,
            response_status, response_body, response_location, created_at, updated_at)
          SELECT ${b.organisationId}, 'message-batches', ${b.key}, ${b.fingerprint}, 'done', ${b.batchId},
            ${b.answer.status}, ${JSON.stringify(b.answer.body)}, ${b.answer.location}, ${b.at}, ${b.at}
          FROM org WHERE ${claimable(credits)}
          ON CONFLICT DO NOTHING
          RETURNING batch_id),
        bt AS (
          INSERT INTO message_batches (organisation_id, id, recipient_count, credits_reserved, send_at, created_at)
          SELECT ${b.organisationId}, k.batch_id, ${b.members.length}, ${credits}, ${b.sendAt}, ${b.at} FROM k),
        x AS (SELECT * FROM json_to_recordset(${members}::json) AS x(id uuid, to_number text, position integer)),
        ins AS (
          INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text, segments,
            status, send_at, due_at, created_at, updated_at)
          SELECT ${b.organisationId}, x.id, k.batch_id, x.position, x.to_number, org.sender_name, ${b.text}, ${b.segments},
            'scheduled', ${b.sendAt}, ${b.sendAt}, ${b.at}, ${b.at}
          FROM k, org, x
          RETURNING organisation_id, id),
        ev AS (
          INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
          SELECT organisation_id, id, NULL, 'scheduled', 'admission', ${b.at} FROM ins),
        ${reserve(b, credits)},
        h AS (
          INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
          SELECT ${b.organisationId}, x.id, r.id, ${b.segments}, 'pending', ${b.at} FROM r, x),
        ce AS (
          INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
          SELECT ${b.organisationId}, r.id, x.id, 'reserve', ${b.segments}, ${b.at} FROM r, x)
        ${outcome}`.pipe(Effect.map(resultOf), fallbackOnRace, Effect.withSpan("QuickAdmission.batch"))
    }

    return QuickAdmission.of({ message, batch })
  }))
}
