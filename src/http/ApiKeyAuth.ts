/** The public API's authentication: the key decides the organisation; `X-Organization` is refused. */
import { Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { ApiKeyAuth, CurrentKey } from "../api/Security.ts"
import { InvalidApiKey, InvalidOrganisationHeader } from "../domain/Errors.ts"
import { ApiKeys } from "../organisations/ApiKeys.ts"

const invalidKey = InvalidApiKey.withMessage(
  "Missing or invalid API key: send Authorization: Bearer svc_sms_<key_id>.<secret> with a live key"
)

export const apiKeyAuthLayer = Layer.effect(
  ApiKeyAuth,
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    return ApiKeyAuth.of({
      apiKey: (httpEffect, { credential }) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          if (request.headers["x-organization"] !== undefined) {
            return yield* InvalidOrganisationHeader.withMessage(
              "The X-Organization header is not accepted: the organisation is the API key's"
            )
          }
          const key = yield* keys.authenticate(Redacted.value(credential))
          if (Option.isNone(key)) return yield* invalidKey
          return yield* Effect.provideService(httpEffect, CurrentKey, {
            organisationId: key.value.organisationId,
            keyId: key.value.keyId,
            permissions: new Set(key.value.permissions)
          })
        })
    })
  })
)
