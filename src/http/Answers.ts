/** Creation answers on the wire: stored answers replayed as first given, and the Idempotency-Key header rule. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { InvalidIdempotencyKey } from "../domain/Errors.ts"
import { idempotencyKeyPattern } from "../domain/MessageRules.ts"
import type { Answer } from "../idempotency/Answer.ts"

/** The answer as an HTTP response; a replay carries `Idempotent-Replayed: true`. */
export const answerResponse = (answer: Answer, replayed: boolean) =>
  HttpServerResponse.jsonUnsafe(answer.body, {
    status: answer.status,
    headers: {
      ...(answer.location === null ? {} : { location: answer.location }),
      ...(replayed ? { "idempotent-replayed": "true" } : {})
    }
  })

/** The Idempotency-Key header's value, or 400 invalid_idempotency_key (spec 4.7.1). */
export const requireIdempotencyKey = (value: string | undefined) =>
  value !== undefined && idempotencyKeyPattern.test(value)
    ? Effect.succeed(value)
    : Effect.fail(InvalidIdempotencyKey.withMessage(
      value === undefined
        ? "The Idempotency-Key header is required"
        : "The Idempotency-Key header must be 1 to 128 visible ASCII characters"
    ))
