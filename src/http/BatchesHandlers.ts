/** POST /api/sms/v2/message-batches/, GET .../{batch_id}/ and GET .../{batch_id}/messages/ (docs/integrators.md#batches). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { Batches } from "../batches/Batches.ts"
import { checkContent, checkDistinctRecipients } from "../domain/MessageRules.ts"
import { idempotentCreation } from "./IdempotentCreation.ts"
import { requirePermission } from "./Permissions.ts"
import { batchOf, messageOf } from "./Representations.ts"

export const BatchesHandlers = HttpApiBuilder.group(
  Api,
  "message-batches",
  Effect.fn(function* (handlers) {
    const batches = yield* Batches
    return handlers
      .handle("create", ({ headers, payload }) =>
        Effect.gen(function* () {
          const organisationId = yield* requirePermission("sms.schedule")
          const duplicates = checkDistinctRecipients(payload.recipients)
          if (duplicates !== undefined) return yield* duplicates
          const content = checkContent(payload)
          if (!("segments" in content)) return yield* content
          return yield* idempotentCreation("message-batches", payload, (fingerprint) =>
            batches
              .create(organisationId, headers["idempotency-key"], fingerprint, {
                recipients: payload.recipients,
                text: payload.text,
                senderName: payload.sender_name,
                segments: content.segments,
                sendAt: content.sendAt ?? new Date(0)
              })
              .pipe(
                // erasure applies to single messages only: a batch key never answers 410
                Effect.catchTag("PersonalDataErased", Effect.die)
              )
          )
        })
      )
      .handle("get", ({ params }) =>
        requirePermission("delivery.read").pipe(
          Effect.flatMap((organisationId) => batches.get(organisationId, params.batch_id)),
          Effect.map(batchOf)
        )
      )
      .handle("messages", ({ params, query }) =>
        requirePermission("delivery.read").pipe(
          Effect.flatMap((organisationId) => batches.page(organisationId, params.batch_id, query.cursor)),
          Effect.map((p) => ({ results: p.results.map(messageOf), next_cursor: p.nextCursor }))
        )
      )
  })
)
