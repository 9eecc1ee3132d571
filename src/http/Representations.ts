/**
 * The service's values as the public API shows them (docs/integrators.md#messages): the `Type` side of the
 * schemas of api/Schemas.ts, which HttpApi then encodes, and the `Location` of created resources.
 */
import { apiPrefix } from "../api/Api.ts"
import type { Balance, Batch, Message, Webhook, WebhookDelivery } from "../api/Schemas.ts"
import type { BatchView } from "../batches/Batch.ts"
import type { BalanceView } from "../ledger/Ledger.ts"
import type { MessageRow } from "../messages/MessageRow.ts"
import type { DeliveryRow, EndpointRow } from "../webhooks/WebhookStore.ts"

/** What the Message resource shows of a message (a webhook's snapshot holds exactly these). */
export type MessageShown = Pick<
  MessageRow,
  "id" | "toNumber" | "senderName" | "status" | "segments" | "sendAt" | "deliveryTime"
>

/** The Message resource, docs/integrators.md#messages. */
export const messageOf = (m: MessageShown): typeof Message.Type => ({
  id: m.id,
  to: m.toNumber,
  sender_name: m.senderName,
  status: m.status,
  segments: m.segments,
  send_at: m.sendAt === null ? null : m.sendAt.toISOString(),
  delivery_time: m.deliveryTime === null ? null : m.deliveryTime.toISOString()
})

/** The Batch resource, docs/integrators.md#batches. */
export const batchOf = (b: BatchView): typeof Batch.Type => ({
  id: b.id,
  recipient_count: b.recipientCount,
  credits_reserved: b.creditsReserved,
  send_at: b.sendAt.toISOString(),
  created_at: b.createdAt.toISOString(),
  counts: b.counts
})

/** The Balance resource, docs/integrators.md#balance. */
export const balanceOf = (b: BalanceView): typeof Balance.Type => ({
  total: b.total,
  reserved: b.reserved,
  available: b.available,
  valid_until: b.validUntil
})

/** Where a message is read. */
export const messageLocation = (id: string) => `${apiPrefix}/messages/${id}/`

/** Where a batch is read. */
export const batchLocation = (id: string) => `${apiPrefix}/message-batches/${id}/`

/** A webhook endpoint (docs/decisions.md#webhooks), never with its secret. */
export const webhookOf = (e: EndpointRow): typeof Webhook.Type => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description,
  enabled: e.enabled,
  created_at: e.createdAt.toISOString()
})

/** One line of an endpoint's delivery log. */
export const webhookDeliveryOf = (d: DeliveryRow): typeof WebhookDelivery.Type => ({
  event_id: `evt_${d.eventId}`,
  type: d.type,
  state: d.state,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  next_attempt_at: d.nextAttemptAt === null ? null : d.nextAttemptAt.toISOString(),
  created_at: d.createdAt.toISOString()
})

/** Where a webhook endpoint is read. */
export const webhookLocation = (id: string) => `${apiPrefix}/webhooks/${id}/`
