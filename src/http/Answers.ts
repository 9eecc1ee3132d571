/** Creation answers on the wire: stored answers replayed as first given. */
import { HttpServerResponse } from "effect/http"
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
