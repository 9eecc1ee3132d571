/** Maps HttpApi's request-decoding failures to the spec's bodies; response-encoding failures are ours: 500. */
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { SchemaErrors } from "../api/Security.ts"
import { errorBody, InternalError, InvalidIdempotencyKey, ParseError, ValidationError } from "../domain/Errors.ts"
import { issueDetails, payloadError } from "./SchemaIssues.ts"

const kindName = { Params: "path", Query: "query" } as const

/**
 * Spec 4.7.1: a missing or malformed Idempotency-Key is 400 invalid_idempotency_key, never a
 * validation_error. Answered here as a response, with the error's own body: as a failure this
 * middleware would declare invalid_idempotency_key for every endpoint of the document.
 */
const invalidIdempotencyKey = (problem: string) =>
  HttpServerResponse.jsonUnsafe(
    errorBody(
      InvalidIdempotencyKey.code,
      problem === "is required"
        ? "The Idempotency-Key header is required"
        : "The Idempotency-Key header must be 1 to 128 visible ASCII characters"
    ),
    { status: InvalidIdempotencyKey.status }
  )

export const schemaErrorsLayer = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors, (error) => {
  switch (error.kind) {
    case "Payload":
      // an empty body is not JSON at all (HttpApi decodes it as a missing payload)
      return HttpServerRequest.HttpServerRequest.pipe(
        Effect.flatMap((request) => Effect.orElseSucceed(request.text, () => "")),
        Effect.flatMap((text) =>
          Effect.fail(
            text.trim() === ""
              ? ParseError.withMessage("Request body is empty: send a JSON object")
              : payloadError(error.cause.issue)
          )
        )
      )
    case "Headers": {
      const details = issueDetails(error.cause.issue)
      const key = details.find((d) => d.field === "idempotency-key")
      return key === undefined
        ? Effect.fail(ValidationError.withMessage("Invalid request headers", { details }))
        : Effect.succeed(invalidIdempotencyKey(key.message))
    }
    // a path id can only fail as text (NUL, unpaired surrogate): any storable id is looked up, and 404s when absent
    case "Params":
    case "Query":
      return Effect.fail(
        ValidationError.withMessage(`Invalid request ${kindName[error.kind]}`, {
          details: issueDetails(error.cause.issue)
        })
      )
    case "Body":
    case "ResponseHeaders":
      return Effect.logError("response encoding failed", error.cause).pipe(
        Effect.andThen(Effect.fail(InternalError.withMessage("Internal server error")))
      )
  }
})
