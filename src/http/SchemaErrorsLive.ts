/** Maps HttpApi's request-decoding failures to the spec's bodies; response-encoding failures are ours: 500. */
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { SchemaErrors } from "../api/Security.ts"
import { InternalError, ParseError, ValidationError } from "../domain/Errors.ts"
import { issueDetails, payloadError } from "./SchemaIssues.ts"

const kindName = { Params: "path", Headers: "headers", Query: "query" } as const

export const SchemaErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors, (error) => {
  switch (error.kind) {
    case "Payload":
      // an empty body is not JSON at all (HttpApi decodes it as a missing payload)
      return HttpServerRequest.HttpServerRequest.pipe(
        Effect.flatMap((request) => Effect.orElseSucceed(request.text, () => "")),
        Effect.flatMap((text) =>
          Effect.fail(text.trim() === "" ? ParseError.withMessage("Request body is empty: send a JSON object") : payloadError(error.cause.issue))
        )
      )
    // a path id can only fail as text (NUL, unpaired surrogate): any storable id is looked up, and 404s when absent
    case "Params":
    case "Headers":
    case "Query":
      return Effect.fail(ValidationError.withMessage(`Invalid request ${kindName[error.kind]}`, {
        details: issueDetails(error.cause.issue)
      }))
    case "Body":
    case "ResponseHeaders":
      return Effect.logError("response encoding failed", error.cause).pipe(
        Effect.andThen(Effect.fail(InternalError.withMessage("Internal server error")))
      )
  }
})
