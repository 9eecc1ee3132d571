/**
 * The `data` of an event: the message exactly as GET /messages/{id}/ answers it at the
 * transition (from the snapshot the outbox took), or the batch as GET /message-batches/{id}/
 * answers it. A port: the representations belong to the HTTP edge, which provides it
 * (http/WebhookPayloads.ts).
 */
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import type { ClaimedDelivery } from "./WebhookStore.ts"

export class WebhookPayloads extends Context.Service<
  WebhookPayloads,
  {
    /** The event's `data`, as JSON. */
    readonly data: (event: ClaimedDelivery) => Effect.Effect<unknown, DatabaseUnavailable>
  }
>()("sms/WebhookPayloads") {}
