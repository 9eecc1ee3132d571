/** POST /api/sms/v2/messages/ and GET /api/sms/v2/messages/{message_id}/ (docs/integrators.md#messages). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { NotFound } from "../domain/Errors.ts"
import { checkContent } from "../domain/MessageRules.ts"
import { Messages } from "../messages/Messages.ts"
import { idempotentCreation } from "./IdempotentCreation.ts"
import { requirePermission } from "./Permissions.ts"
import { messageOf } from "./Representations.ts"

export const MessagesHandlers = HttpApiBuilder.group(
  Api,
  "messages",
  Effect.fn(function* (handlers) {
    const messages = yield* Messages
    return handlers
      .handle("create", ({ headers, payload }) =>
        Effect.gen(function* () {
          const organisationId = yield* requirePermission(payload.send_at === undefined ? "sms.send" : "sms.schedule")
          const content = checkContent(payload)
          if (!("segments" in content)) return yield* content
          return yield* idempotentCreation("messages", payload, (fingerprint) =>
            messages.create(organisationId, headers["idempotency-key"], fingerprint, {
              to: payload.to,
              text: payload.text,
              senderName: payload.sender_name,
              segments: content.segments,
              sendAt: content.sendAt
            })
          )
        })
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const organisationId = yield* requirePermission("delivery.read")
          const message = yield* messages.get(organisationId, params.message_id)
          if (message === undefined) return yield* NotFound.withMessage("No such message")
          return messageOf(message)
        })
      )
  })
)
