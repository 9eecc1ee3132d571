/**
 * POST /api/sms/v2/contacts/ (docs/integrators.md#contacts). Handled raw so that the int64 `status` is parsed and
 * written back exactly (see LosslessJson.ts); validation follows the same schema and error
 * bodies as every other endpoint.
 */
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { ContactWriteInput } from "../api/Schemas.ts"
import { ParseError, UnsupportedMediaType } from "../domain/Errors.ts"
import { ContactStore } from "../contacts/ContactStore.ts"
import { parseLossless, stringifyLossless } from "./LosslessJson.ts"
import { requirePermission } from "./Permissions.ts"
import { payloadError } from "./SchemaIssues.ts"
import { isJsonContentType } from "./ContentType.ts"

const decode = Schema.decodeUnknownEffect(ContactWriteInput, { onExcessProperty: "error", errors: "all" })
const bigintKeys = new Set(["status"])

export const ContactsHandlers = HttpApiBuilder.group(
  Api,
  "contacts",
  Effect.fn(function* (handlers) {
    const contacts = yield* ContactStore
    return handlers.handleRaw("upsert", ({ request }) =>
      Effect.gen(function* () {
        const organisationId = yield* requirePermission("contacts.manage")
        if (!isJsonContentType(request.headers["content-type"])) {
          return yield* UnsupportedMediaType.withMessage("Content-Type must be application/json")
        }
        const text = yield* Effect.orDie(request.text)
        const parsed = yield* Effect.try({
          try: () => parseLossless(text, bigintKeys),
          catch: () => ParseError.withMessage("Request body is not valid JSON")
        })
        const input = yield* decode(parsed).pipe(Effect.mapError((e) => payloadError(e.issue)))
        const { contact, created } = yield* contacts.upsert(organisationId, input)
        return HttpServerResponse.text(stringifyLossless(contact), {
          status: created ? 201 : 200,
          contentType: "application/json"
        })
      })
    )
  })
)
