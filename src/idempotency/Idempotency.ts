/**
 * Durable idempotency keys (spec 4.7, contract section 4), Stripe-style: a creation claims its
 * (organisation, route, key) inside the admission transaction, and the answer it finally gives
 * is stored under that key and replayed as first given. Only the definitive answers of contract
 * section 4 are ever stored; every other failure rolls the claim back with its transaction.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { canonicalJson } from "../domain/CanonicalJson.ts"
import { IdempotencyConflict, IdempotencyInProgress, PersonalDataErased } from "../domain/Errors.ts"
import type { Answer } from "./Answer.ts"
import { ServiceSecret } from "../ServiceSecret.ts"

export type Route = "messages" | "message-batches"

/** What a claim found: a new key (go on), or a stored answer to replay. */
export type Claim =
  | { readonly _tag: "New" }
  | { readonly _tag: "Replay"; readonly answer: Answer }

/** A stored key as a claim judges it. */
export interface KeyRow {
  readonly fingerprint: string
  readonly state: "in_progress" | "done"
  readonly responseStatus: number | null
  readonly responseBody: string | null
  readonly responseLocation: string | null
  readonly erased: boolean
}

export type ClaimError = IdempotencyConflict | IdempotencyInProgress | PersonalDataErased

/**
 * What a key already stored means for a request with `fingerprint` (spec 4.7): a replay of its
 * answer, or 409 idempotency_conflict (other content), 410 personal_data_erased (its message was
 * erased), 409 idempotency_in_progress (the identical request has no answer yet).
 */
export const judgeStoredKey = (row: KeyRow, fingerprint: string): Effect.Effect<Claim, ClaimError> => {
  if (row.fingerprint !== fingerprint) {
    return Effect.fail(IdempotencyConflict.withMessage(
      "This Idempotency-Key was already used with different content; do not change the key automatically"
    ))
  }
  if (row.erased) {
    return Effect.fail(PersonalDataErased.withMessage("The personal data of this message was erased; do not resubmit it with a new key"))
  }
  if (row.state === "in_progress" || row.responseStatus === null) {
    return Effect.fail(IdempotencyInProgress.withMessage(
      "An identical request with this Idempotency-Key is still processing; retry identically later"
    ))
  }
  return Effect.succeed({
    _tag: "Replay",
    answer: { status: row.responseStatus, body: JSON.parse(row.responseBody ?? "null"), location: row.responseLocation }
  })
}

// Stryker disable StringLiteral: the service's key ("sms/Idempotency" below) is unique whatever its text
export class Idempotency extends Context.Service<Idempotency, {
  /** The fingerprint of a request: an HMAC of its route and canonical JSON body. */
  readonly fingerprint: (route: Route, body: unknown) => string
  /**
   * Claims the key for this request, inside the caller's transaction; with `answer`, the key is
   * stored answered at once (a creation whose answer is known before it commits). Fails
   * IdempotencyConflict (same key, other content), IdempotencyInProgress (identical request
   * still running) or PersonalDataErased (its message was erased).
   */
  readonly claim: (
    organisationId: string,
    route: Route,
    key: string,
    fingerprint: string,
    ids: { readonly messageId?: string; readonly batchId?: string; readonly answer?: Answer },
    at: Date
  ) => Effect.Effect<Claim, ClaimError | SqlError.SqlError>
  /** Stores each answer for the in-progress key whose request created its message, if any; one statement for the set. */
  readonly storeForMessages: (
    answers: ReadonlyArray<{ readonly organisationId: string; readonly messageId: string; readonly answer: Answer }>,
    at: Date
  ) => Effect.Effect<void, SqlError.SqlError>
  /** The message whose creation still holds this key in progress, if any. */
  readonly inProgressMessage: (organisationId: string, route: Route, key: string) => Effect.Effect<string | undefined, SqlError.SqlError>
  /** The answer stored for the key whose request created this message, when it has one. */
  readonly storedForMessage: (organisationId: string, messageId: string) => Effect.Effect<Answer | undefined, SqlError.SqlError>
  /** Forgets the stored body of a message's key (erasure); replays then answer 410. */
  readonly eraseForMessage: (organisationId: string, messageId: string) => Effect.Effect<void, SqlError.SqlError>
}>()("sms/Idempotency") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(Idempotency, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServiceSecret

    // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
    const claim = Effect.fn("Idempotency.claim")(function*(
      organisationId: string,
      route: Route,
      key: string,
      fingerprint: string,
      ids: { readonly messageId?: string; readonly batchId?: string; readonly answer?: Answer },
      at: Date
    ) {
      const answer = ids.answer
      const inserted = yield* sql`INSERT INTO idempotency_keys
          (organisation_id, route, key, fingerprint, state, message_id, batch_id,
           response_status, response_body, response_location, created_at, updated_at)
        VALUES (${organisationId}, ${route}, ${key}, ${fingerprint}, ${answer === undefined ? "in_progress" : "done"},
          ${ids.messageId ?? null}::uuid, ${ids.batchId ?? null}::uuid, ${answer?.status ?? null}::integer,
          ${answer === undefined ? null : JSON.stringify(answer.body)}::text, ${answer?.location ?? null}::text, ${at}, ${at})
        ON CONFLICT DO NOTHING RETURNING key`
      if (inserted.length > 0) return { _tag: "New" } as Claim
      const [row] = yield* sql<KeyRow>`SELECT k.fingerprint, k.state, k.response_status, k.response_body, k.response_location,
          (m.erased_at IS NOT NULL) AS erased
        FROM idempotency_keys k
        LEFT JOIN messages m ON m.organisation_id = k.organisation_id AND m.id = k.message_id
        WHERE k.organisation_id = ${organisationId} AND k.route = ${route} AND k.key = ${key}`
      // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable, a key is never deleted between the insert that found it and this read
      if (row === undefined) return yield* Effect.die(new Error("idempotency key vanished"))
      return yield* judgeStoredKey(row, fingerprint)
    })

    return Idempotency.of({
      fingerprint: (route, body) => secret.sign(`${route}\n${canonicalJson(body)}`),
      claim,
      storeForMessages: (answers, at) => {
        // Stryker disable next-line ConditionalExpression: equivalent, an empty set updates no row; the return saves the statement
        if (answers.length === 0) return Effect.void
        const rows = answers.map((a) => ({
          organisation_id: a.organisationId,
          message_id: a.messageId,
          status: a.answer.status,
          body: JSON.stringify(a.answer.body),
          location: a.answer.location
        }))
        return sql`UPDATE idempotency_keys AS k SET state = 'done', response_status = x.status,
            response_body = x.body, response_location = x.location, updated_at = ${at}
          FROM json_to_recordset(${JSON.stringify(rows)}::json)
            AS x(organisation_id uuid, message_id uuid, status integer, body text, location text)
          WHERE k.organisation_id = x.organisation_id AND k.message_id = x.message_id AND k.state = 'in_progress'`.pipe(
          Effect.asVoid
        )
      },
      inProgressMessage: (organisationId, route, key) =>
        sql<{ messageId: string | null }>`SELECT message_id::text FROM idempotency_keys
          WHERE organisation_id = ${organisationId} AND route = ${route} AND key = ${key} AND state = 'in_progress'`.pipe(
          Effect.map(([row]) => row?.messageId ?? undefined)
        ),
      storedForMessage: (organisationId, messageId) =>
        sql<{ responseStatus: number; responseBody: string; responseLocation: string | null }>`SELECT response_status,
            response_body, response_location FROM idempotency_keys
          WHERE organisation_id = ${organisationId} AND message_id = ${messageId} AND state = 'done'
            AND response_body IS NOT NULL`.pipe(
          Effect.map(([row]) =>
            row === undefined
              ? undefined
              : { status: row.responseStatus, body: JSON.parse(row.responseBody), location: row.responseLocation })
        ),
      eraseForMessage: (organisationId, messageId) =>
        sql`UPDATE idempotency_keys SET response_body = NULL
          WHERE organisation_id = ${organisationId} AND message_id = ${messageId}`.pipe(Effect.asVoid)
    })
  }))
}
