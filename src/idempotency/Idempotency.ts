/**
 * Durable idempotency keys (docs/integrators.md#idempotency, docs/decisions.md#idempotency), Stripe-style: a creation claims its
 * (organisation, route, key) inside its admission, and the answer it finally gives is stored
 * under that key and replayed as first given. Only the definitive answers of docs/decisions.md#idempotency
 * are ever stored; every other failure rolls the claim back with its transaction. The table is
 * IdempotencyStore's; what a stored key means for a request is judged here.
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { canonicalJson } from "../domain/CanonicalJson.ts"
import { IdempotencyConflict, IdempotencyInProgress, PersonalDataErased } from "../domain/Errors.ts"
import { ServiceSecret } from "../secrets/ServiceSecret.ts"
import { now } from "../clock/Time.ts"
import type { Answer } from "./Answer.ts"
import { IdempotencyStore, type KeyRow, type NewKey, type Route } from "./IdempotencyStore.ts"

export type { KeyRow, NewKey, Route } from "./IdempotencyStore.ts"

/** What a claim found: a new key (go on), or a stored answer to replay. */
export type Claim = { readonly _tag: "New" } | { readonly _tag: "Replay"; readonly answer: Answer }

export type ClaimError = IdempotencyConflict | IdempotencyInProgress | PersonalDataErased

/**
 * What a key already stored means for a request with `fingerprint` (docs/integrators.md#idempotency): a replay of its
 * answer, or 409 idempotency_conflict (other content), 410 personal_data_erased (its message was
 * erased), 409 idempotency_in_progress (the identical request has no answer yet).
 */
export const judgeStoredKey = (row: KeyRow, fingerprint: string): Effect.Effect<Claim, ClaimError> => {
  if (row.fingerprint !== fingerprint) {
    return Effect.fail(
      IdempotencyConflict.withMessage(
        "This Idempotency-Key was already used with different content; do not change the key automatically"
      )
    )
  }
  if (row.erased) {
    return Effect.fail(
      PersonalDataErased.withMessage("The personal data of this message was erased; do not resubmit it with a new key")
    )
  }
  if (row.state === "in_progress" || row.responseStatus === null) {
    return Effect.fail(
      IdempotencyInProgress.withMessage(
        "An identical request with this Idempotency-Key is still processing; retry identically later"
      )
    )
  }
  return Effect.succeed({
    _tag: "Replay",
    answer: { status: row.responseStatus, body: JSON.parse(row.responseBody ?? "null"), location: row.responseLocation }
  })
}

// Stryker disable StringLiteral: the service's key ("sms/Idempotency" below) is unique whatever its text
export class Idempotency extends Context.Service<
  Idempotency,
  {
    /** The fingerprint of a request: an HMAC of its route and canonical JSON body. */
    readonly fingerprint: (route: Route, body: unknown) => string
    /**
     * Claims the key for this request, inside the caller's transaction; with `answer`, the key is
     * stored answered at once (a creation whose answer is known before it commits). Fails
     * IdempotencyConflict (same key, other content), IdempotencyInProgress (identical request
     * still running) or PersonalDataErased (its message was erased).
     */
    readonly claim: (key: NewKey) => Effect.Effect<Claim, ClaimError | DatabaseUnavailable>
  }
>()("sms/Idempotency") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(
    Idempotency,
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const secret = yield* ServiceSecret
      return Idempotency.of({
        fingerprint: (route, body) => secret.sign(`${route}\n${canonicalJson(body)}`),
        // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
        claim: Effect.fn("Idempotency.claim")(function* (key: NewKey) {
          const stored = yield* store.claim(key, yield* now)
          return stored === undefined ? ({ _tag: "New" } as Claim) : yield* judgeStoredKey(stored, key.fingerprint)
        })
      })
    })
  ).pipe(Layer.provideMerge(IdempotencyStore.layer))
}
