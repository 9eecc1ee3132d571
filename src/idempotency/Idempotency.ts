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
import type { Answer } from "../messages/MessageBody.ts"
import { ServiceSecret } from "../ServiceSecret.ts"

export type Route = "messages" | "message-batches"

/** What a claim found: a new key (go on), or a stored answer to replay. */
export type Claim =
  | { readonly _tag: "New" }
  | { readonly _tag: "Replay"; readonly answer: Answer }

interface KeyRow {
  readonly fingerprint: string
  readonly state: "in_progress" | "done"
  readonly responseStatus: number | null
  readonly responseBody: string | null
  readonly responseLocation: string | null
  readonly erased: boolean
}

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
  ) => Effect.Effect<Claim, IdempotencyConflict | IdempotencyInProgress | PersonalDataErased | SqlError.SqlError>
  /** Stores the answer for the in-progress key whose request created this message, if any. */
  readonly storeForMessage: (organisationId: string, messageId: string, answer: Answer, at: Date) => Effect.Effect<void, SqlError.SqlError>
  /** Forgets the stored body of a message's key (erasure); replays then answer 410. */
  readonly eraseForMessage: (organisationId: string, messageId: string) => Effect.Effect<void, SqlError.SqlError>
}>()("sms/Idempotency") {
  static readonly layer = Layer.effect(Idempotency, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = yield* ServiceSecret

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
      if (row === undefined) return yield* Effect.die(new Error("idempotency key vanished"))
      if (row.fingerprint !== fingerprint) {
        return yield* IdempotencyConflict.withMessage(
          "This Idempotency-Key was already used with different content; do not change the key automatically"
        )
      }
      if (row.erased) {
        return yield* PersonalDataErased.withMessage(
          "The personal data of this message was erased; do not resubmit it with a new key"
        )
      }
      if (row.state === "in_progress" || row.responseStatus === null) {
        return yield* IdempotencyInProgress.withMessage(
          "An identical request with this Idempotency-Key is still processing; retry identically later"
        )
      }
      return {
        _tag: "Replay",
        answer: { status: row.responseStatus, body: JSON.parse(row.responseBody ?? "null"), location: row.responseLocation }
      } as Claim
    })

    return Idempotency.of({
      fingerprint: (route, body) => secret.sign(`${route}\n${canonicalJson(body)}`),
      claim,
      storeForMessage: (organisationId, messageId, answer, at) =>
        sql`UPDATE idempotency_keys SET state = 'done', response_status = ${answer.status},
            response_body = ${JSON.stringify(answer.body)}, response_location = ${answer.location}, updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND message_id = ${messageId} AND state = 'in_progress'`.pipe(Effect.asVoid),
      eraseForMessage: (organisationId, messageId) =>
        sql`UPDATE idempotency_keys SET response_body = NULL
          WHERE organisation_id = ${organisationId} AND message_id = ${messageId}`.pipe(Effect.asVoid)
    })
  }))
}
