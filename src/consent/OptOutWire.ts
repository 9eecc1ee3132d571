/**
 * An opt-out as the public API and the operator's API show it (docs/two-way.md):
 * `{phone_number, source, inbound_message_id, created_at}`. One function, so that both answer the same object.
 */
import type { OptOutRow } from "./OptOutStore.ts"

export const optOutWire = (row: Pick<OptOutRow, "phoneNumber" | "source" | "inboundMessageId" | "createdAt">) => ({
  phone_number: row.phoneNumber,
  source: row.source,
  inbound_message_id: row.inboundMessageId,
  created_at: row.createdAt.toISOString()
})
