/**
 * The table of idempotency keys, owned here: per (organisation, route, key) the fingerprint of
 * the request that claimed it, whether its answer is known, the message or batch it created, and
 * the answer as first given (status, JSON body, Location), encoded by the HTTP edge. Erasure of a
 * message forgets its key's body: a key `done` without a body is an erased one.
 *
 * The one-statement admission (messages/QuickAdmission.ts) claims keys with the fragments below.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { Answer } from "./Answer.ts"

export type Route = "messages" | "message-batches" | "webhooks"

/** A stored key as a claim judges it. */
export interface KeyRow {
  readonly fingerprint: string
  readonly state: "in_progress" | "done"
  readonly responseStatus: number | null
  readonly responseBody: string | null
  readonly responseLocation: string | null
  readonly erased: boolean
}

/** A new key: who claims it, for what, and its answer when known at once (a creation that answers before it commits). */
export interface NewKey {
  readonly organisationId: string
  readonly route: Route
  readonly key: string
  readonly fingerprint: string
  readonly messageId?: string
  readonly batchId?: string
  readonly answer?: Answer
}

/** The columns of a stored key as KeyRow reads them. */
const keyColumns =
  "fingerprint, state, response_status, response_body, response_location, (state = 'done' AND response_body IS NULL) AS erased"

// Stryker disable StringLiteral: the service's key ("sms/IdempotencyStore" below) is unique whatever its text
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    /** Claims a new key; returns the key stored already when there is one (undefined: claimed). */
    readonly claim: (key: NewKey, at: Date) => Fails<KeyRow | undefined>
    /** Stores each answer for the in-progress key whose request created its message, if any; one statement for the set. */
    readonly answerForMessages: (
      answers: ReadonlyArray<{ readonly organisationId: string; readonly messageId: string; readonly answer: Answer }>,
      at: Date
    ) => Fails<void>
    /** The message whose creation still holds this key in progress, if any. */
    readonly inProgressMessage: (organisationId: string, route: Route, key: string) => Fails<string | undefined>
    /** The answer stored for the key whose request created this message, when it has one. */
    readonly answerOfMessage: (organisationId: string, messageId: string) => Fails<Answer | undefined>
    /** The answer stored for this key, once it has one (a read by its primary key, cheap enough to poll). */
    readonly answerOfKey: (organisationId: string, route: Route, key: string) => Fails<Answer | undefined>
    /** Forgets the stored bodies of these messages' keys (erasure), in one statement; replays then answer 410. */
    readonly eraseForMessages: (
      messages: ReadonlyArray<{ readonly organisationId: string; readonly id: string }>
    ) => Fails<void>
  }
>()("sms/IdempotencyStore") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(
    IdempotencyStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fragments = idempotencyFragments(sql)

      return IdempotencyStore.of({
        claim: (k, at) =>
          fromDatabase(
            Effect.gen(function* () {
              const answer = k.answer
              const inserted = yield* sql`INSERT INTO idempotency_keys
              (organisation_id, route, key, fingerprint, state, message_id, batch_id,
               response_status, response_body, response_location, created_at, updated_at)
            VALUES (${k.organisationId}, ${k.route}, ${k.key}, ${k.fingerprint}, ${answer === undefined ? "in_progress" : "done"},
              ${k.messageId ?? null}::uuid, ${k.batchId ?? null}::uuid, ${answer?.status ?? null}::integer,
              ${answer === undefined ? null : JSON.stringify(answer.body)}::text, ${answer?.location ?? null}::text, ${at}, ${at})
            ON CONFLICT DO NOTHING RETURNING key`
              if (inserted.length > 0) return undefined
              const [row] =
                yield* sql<KeyRow>`WITH ${fragments.existing(k.organisationId, k.route, k.key)} SELECT * FROM existing`
              // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable, a key is never deleted between the insert that found it and this read
              return row ?? (yield* Effect.die(new Error("idempotency key vanished")))
            })
          ),
        answerForMessages: (answers, at) => {
          // Stryker disable next-line ConditionalExpression: equivalent, an empty set updates no row; the return saves the statement
          if (answers.length === 0) return Effect.void
          const rows = answers.map((a) => ({
            organisation_id: a.organisationId,
            message_id: a.messageId,
            status: a.answer.status,
            body: JSON.stringify(a.answer.body),
            location: a.answer.location
          }))
          return fromDatabase(
            sql`UPDATE idempotency_keys AS k SET state = 'done', response_status = x.status,
            response_body = x.body, response_location = x.location, updated_at = ${at}
          FROM json_to_recordset(${JSON.stringify(rows)}::json)
            AS x(organisation_id uuid, message_id uuid, status integer, body text, location text)
          WHERE k.organisation_id = x.organisation_id AND k.message_id = x.message_id AND k.state = 'in_progress'`.pipe(
              Effect.asVoid
            )
          )
        },
        inProgressMessage: (organisationId, route, key) =>
          fromDatabase(
            sql<{ messageId: string | null }>`SELECT message_id::text FROM idempotency_keys
          WHERE organisation_id = ${organisationId} AND route = ${route} AND key = ${key} AND state = 'in_progress'`.pipe(
              Effect.map(([row]) => row?.messageId ?? undefined)
            )
          ),
        answerOfMessage: (organisationId, messageId) =>
          fromDatabase(
            sql<{
              responseStatus: number
              responseBody: string
              responseLocation: string | null
            }>`SELECT response_status,
            response_body, response_location FROM idempotency_keys
          WHERE organisation_id = ${organisationId} AND message_id = ${messageId} AND state = 'done'
            AND response_body IS NOT NULL`.pipe(
              Effect.map(([row]) =>
                row === undefined
                  ? undefined
                  : { status: row.responseStatus, body: JSON.parse(row.responseBody), location: row.responseLocation }
              )
            )
          ),
        answerOfKey: (organisationId, route, key) =>
          fromDatabase(
            sql<{
              responseStatus: number
              responseBody: string
              responseLocation: string | null
            }>`SELECT response_status,
            response_body, response_location FROM idempotency_keys
          WHERE organisation_id = ${organisationId} AND route = ${route} AND key = ${key} AND state = 'done'
            AND response_body IS NOT NULL`.pipe(
              Effect.map(([row]) =>
                row === undefined
                  ? undefined
                  : { status: row.responseStatus, body: JSON.parse(row.responseBody), location: row.responseLocation }
              )
            )
          ),
        eraseForMessages: (messages) =>
          messages.length === 0
            ? Effect.void
            : fromDatabase(
                sql`UPDATE idempotency_keys AS k SET response_body = NULL
          FROM json_to_recordset(${JSON.stringify(messages.map((m) => ({ o: m.organisationId, i: m.id })))}::json) AS x(o uuid, i uuid)
          WHERE k.organisation_id = x.o AND k.message_id = x.i`.pipe(Effect.asVoid)
              )
      })
    })
  )
}

/** Fragments of the one-statement admission. */
export const idempotencyFragments = (sql: SqlClient.SqlClient) => ({
  /** The CTE `existing`: the key as stored, if it is (columns of KeyRow). */
  existing: (organisationId: string, route: Route, key: string) =>
    sql`existing AS (
      SELECT ${sql.literal(keyColumns)} FROM idempotency_keys
      WHERE organisation_id = ${organisationId} AND route = ${route} AND key = ${key})`,
  /**
   * The CTE `k`: the key claimed when `condition` holds (and nobody claimed it meanwhile),
   * returning `message_id` and `batch_id`. A known answer is stored with it; its body is `body`,
   * a text expression (the admission writes the sender it resolved into it).
   */
  claim: (key: NewKey, at: Date, body: Statement.Fragment, condition: Statement.Fragment) =>
    sql`k AS (
      INSERT INTO idempotency_keys (organisation_id, route, key, fingerprint, state, message_id, batch_id,
        response_status, response_body, response_location, created_at, updated_at)
      SELECT ${key.organisationId}, ${key.route}, ${key.key}, ${key.fingerprint}, ${key.answer === undefined ? "in_progress" : "done"},
        ${key.messageId ?? null}::uuid, ${key.batchId ?? null}::uuid, ${key.answer?.status ?? null}::integer, ${body},
        ${key.answer?.location ?? null}::text, ${at}, ${at}
      WHERE ${condition}
      ON CONFLICT DO NOTHING
      RETURNING message_id, batch_id)`
})
