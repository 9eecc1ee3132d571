/**
 * The creations of the public API under their Idempotency-Key (docs/integrators.md#idempotency). The key is a
 * required argument, so these always send it; the answer says whether it was a replay.
 */
import { Effect } from "effect"
import type { HttpClientResponse } from "effect/http"
import type { HttpApiSchema } from "effect/http-api"
import type { BatchCreate, MessageCreate, WebhookCreate } from "../api/Schemas.ts"
import type { SmsClient } from "./SmsClient.ts"

/** A creation's answer: the resource, the status (201 sent, 202 scheduled), its Location, and whether it was replayed. */
export interface Created<A> {
  readonly body: A
  readonly status: number
  readonly location: string
  /** True when the service answered with the response stored for this key (`Idempotent-Replayed: true`). */
  readonly replayed: boolean
}

const created = <A>([value, response]: readonly [
  HttpApiSchema.withHeaders<A, { readonly location: string }>,
  HttpClientResponse.HttpClientResponse
]): Created<A> => ({
  body: value.body,
  status: response.status,
  location: value.headers.location,
  replayed: response.headers["idempotent-replayed"] === "true"
})

/**
 * Sends a message now (201) or schedules it with `send_at` (202) under `idempotencyKey`. Retry a
 * lost answer with the same key and body: never a new key, which would be a new message.
 */
export const sendMessage = (client: SmsClient, idempotencyKey: string, message: MessageCreate) =>
  client.messages
    .create({ headers: { "idempotency-key": idempotencyKey }, payload: message, responseMode: "decoded-and-response" })
    .pipe(Effect.map(created))

/** Schedules one text to up to 1000 recipients (202), all or nothing, under `idempotencyKey`. */
export const createBatch = (client: SmsClient, idempotencyKey: string, batch: BatchCreate) =>
  client["message-batches"]
    .create({ headers: { "idempotency-key": idempotencyKey }, payload: batch, responseMode: "decoded-and-response" })
    .pipe(Effect.map(created))

/**
 * Creates a status webhook endpoint (201) under `idempotencyKey` (docs/decisions.md#webhooks); its
 * `secret`, to verify the events' signatures, is in this answer only (and its replays).
 */
export const createWebhook = (client: SmsClient, idempotencyKey: string, endpoint: WebhookCreate) =>
  client.webhooks
    .create({ headers: { "idempotency-key": idempotencyKey }, payload: endpoint, responseMode: "decoded-and-response" })
    .pipe(Effect.map(created))
