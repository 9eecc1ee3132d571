/**
 * What a creation answers, encoded through the API's declared schemas: the 201 or 202 with its
 * `Location`, or the spec's error body with `message_id` for a failure that is stored. The
 * services store these answers under the creation's Idempotency-Key in the transaction that
 * decides them (MessageAnswers and BatchAnswers are their ports), and the idempotent creation
 * (IdempotentCreation.ts) writes them as responses, first or replayed.
 */
import { Layer, Schema } from "effect"
import { Batch, Message, WebhookCreated } from "../api/Schemas.ts"
import { BatchAnswers } from "../batches/BatchAnswers.ts"
import {
  DispatchUnavailable,
  ProviderRejected,
  ProviderResultUnknown,
  SenderNameUnavailable,
  SmsUnavailable
} from "../domain/Errors.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { MessageAnswers, type MessageOutcome } from "../messages/MessageAnswers.ts"
import type { MessageRow } from "../messages/MessageRow.ts"
import { WebhookAnswers } from "../webhooks/WebhookAnswers.ts"
import { batchLocation, batchOf, messageLocation, messageOf, webhookLocation, webhookOf } from "./Representations.ts"

const encodeMessage = Schema.encodeSync(Message)
const encodeBatch = Schema.encodeSync(Batch)
const encodeWebhookCreated = Schema.encodeSync(WebhookCreated)

const unknownMessage = "The provider's answer is unknown; read the message, never resend it with a new key"

/** A stored failure's answer, through its error class's schema. */
const stored = <E>(ErrorClass: Schema.Codec<E, unknown> & { readonly status: number }, error: E): Answer => ({
  status: ErrorClass.status,
  body: Schema.encodeSync(ErrorClass)(error),
  location: null
})

const messageAnswer = (outcome: MessageOutcome, message: MessageRow): Answer => {
  const messageId = message.id
  switch (outcome) {
    case "Scheduled":
      return { status: 202, body: encodeMessage(messageOf(message)), location: messageLocation(messageId) }
    case "Accepted":
      return { status: 201, body: encodeMessage(messageOf(message)), location: messageLocation(messageId) }
    case "Rejected":
      return stored(
        ProviderRejected,
        ProviderRejected.withMessage("The provider rejected the message; it will not be sent", { messageId })
      )
    case "NeverSent":
      return stored(
        DispatchUnavailable,
        DispatchUnavailable.withMessage("The message could not be handed to the provider; it was not sent", {
          messageId
        })
      )
    case "Unknown":
    case "NotReceived":
      return stored(ProviderResultUnknown, ProviderResultUnknown.withMessage(unknownMessage, { messageId }))
    case "SenderUnavailable":
      return stored(
        SenderNameUnavailable,
        SenderNameUnavailable.withMessage(
          "The sender name was not available when the message was due; it was not sent",
          { messageId }
        )
      )
    case "OptedOut":
      return stored(
        DispatchUnavailable,
        DispatchUnavailable.withMessage(
          "The recipient opted out of this organisation's messages before it was handed over; it was not sent",
          { messageId }
        )
      )
    case "SmsUnavailable":
      return stored(
        SmsUnavailable,
        SmsUnavailable.withMessage(
          "SMS was not available for the organisation when the message was due; it was not sent",
          { messageId }
        )
      )
  }
}

/** The ports of the services, encoded here. */
export const creationAnswersLayer = Layer.mergeAll(
  Layer.succeed(MessageAnswers, MessageAnswers.of({ answer: messageAnswer })),
  Layer.succeed(
    BatchAnswers,
    BatchAnswers.of({
      answer: (batch) => ({ status: 202, body: encodeBatch(batchOf(batch)), location: batchLocation(batch.id) })
    })
  ),
  Layer.succeed(
    WebhookAnswers,
    WebhookAnswers.of({
      answer: (endpoint, secret) => ({
        status: 201,
        body: encodeWebhookCreated({ ...webhookOf(endpoint), secret }),
        location: webhookLocation(endpoint.id)
      })
    })
  )
)
