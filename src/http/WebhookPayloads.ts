/**
 * The `data` of webhook events, in the representations of the public API (docs/decisions.md#webhooks):
 * a message event carries the message as GET /messages/{id}/ answered it at the transition
 * (rendered from the outbox's snapshot by the same `messageOf`), `batch.completed` the batch as
 * GET /message-batches/{id}/ answers it (its counts no longer change once every member is final).
 */
import { Effect, Layer, Schema } from "effect"
import * as Str from "effect/String"
import { Batch, Message } from "../api/Schemas.ts"
import { Batches } from "../batches/Batches.ts"
import { MessageStatusSchema } from "../domain/MessageStatus.ts"
import { dataEventTypes } from "../webhooks/DataEvents.ts"
import { WebhookPayloads } from "../webhooks/WebhookPayloads.ts"
import { batchOf, messageOf } from "./Representations.ts"

const encodeMessage = Schema.encodeSync(Message)
const encodeBatch = Schema.encodeSync(Batch)

/** The snapshot's JSON (WebhookStore's outbox): timestamps are text there. */
const Snapshot = Schema.Struct({
  id: Schema.String,
  toNumber: Schema.String,
  senderName: Schema.String,
  status: MessageStatusSchema,
  segments: Schema.Number,
  sendAt: Schema.NullOr(Schema.String),
  deliveryTime: Schema.NullOr(Schema.String)
})
const decodeSnapshot = Schema.decodeUnknownSync(Snapshot)
const dateOrNull = (s: string | null) => (s === null ? null : new Date(s))

export const webhookPayloadsLayer = Layer.effect(
  WebhookPayloads,
  Effect.gen(function* () {
    const batches = yield* Batches
    return WebhookPayloads.of({
      data: (event) => {
        if (event.type === "batch.completed" && event.batchId !== null) {
          return batches.get(event.organisationId, event.batchId).pipe(
            Effect.map((b) => encodeBatch(batchOf(b))),
            // a batch is never deleted: a missing one is a fault of ours
            Effect.catchTag("NotFound", Effect.die)
          )
        }
        // inbound messages and consent changes carry their data as it was at the change (its keys
        // read back in camel case, as every column the client reads: written again as the API's)
        if ((dataEventTypes as ReadonlyArray<string>).includes(event.type)) {
          return Effect.succeed(
            Object.fromEntries(
              Object.entries((event.message ?? {}) as Record<string, unknown>).map(([k, v]) => [Str.camelToSnake(k), v])
            )
          )
        }
        if (event.message === null || event.message === undefined) return Effect.succeed({})
        const m = decodeSnapshot(event.message)
        return Effect.succeed(
          encodeMessage(messageOf({ ...m, sendAt: dateOrNull(m.sendAt), deliveryTime: dateOrNull(m.deliveryTime) }))
        )
      }
    })
  })
)
