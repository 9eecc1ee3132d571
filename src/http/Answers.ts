/** Answers written as responses by their handlers: stored answers replayed as first given, answers holding a secret. */
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

/**
 * An answer that holds a secret (a new API key, shown only in it): `Cache-Control: no-store`, so
 * that no browser or proxy keeps a copy.
 */
export const secretResponse = (status: number, body: unknown) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store" } })
