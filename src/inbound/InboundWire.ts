/**
 * An inbound message as the public API and its `message.received` event show it
 * (docs/two-way.md): `{id, from, to, text, keyword, segments,
 * incomplete, in_reply_to, received_at}`. One function, so that the event's data and the answer
 * of GET /inbound-messages/{id}/ are the same object.
 */
import type { InboundMessageRow } from "./InboundMessageStore.ts"

export interface InboundMessageWire {
  readonly id: string
  readonly from: string
  readonly to: string
  readonly text: string
  readonly keyword: string | null
  readonly segments: number
  readonly incomplete: boolean
  readonly in_reply_to: string | null
  readonly received_at: string
}

export const inboundWire = (m: InboundMessageRow): InboundMessageWire => ({
  id: m.id,
  from: m.fromNumber,
  to: m.toNumber,
  text: m.text,
  keyword: m.keyword,
  segments: m.segments,
  incomplete: m.incomplete,
  in_reply_to: m.inReplyTo,
  received_at: m.receivedAt.toISOString()
})
