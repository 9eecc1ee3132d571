/** A stored message as the API shows it (spec 2.2). */
import type { MessageStatus } from "../domain/MessageStatus.ts"

export interface MessageRow {
  readonly organisationId: string
  readonly id: string
  readonly batchId: string | null
  readonly toNumber: string
  readonly senderName: string
  readonly text: string
  readonly segments: number
  readonly status: MessageStatus
  readonly sendAt: Date | null
  readonly deliveryTime: Date | null
  readonly erasedAt: Date | null
}

/** The Message resource, spec 2.2. */
export const messageBody = (m: MessageRow) => ({
  id: m.id,
  to: m.toNumber,
  sender_name: m.senderName,
  status: m.status,
  segments: m.segments,
  send_at: m.sendAt === null ? null : m.sendAt.toISOString(),
  delivery_time: m.deliveryTime === null ? null : m.deliveryTime.toISOString()
})
export type MessageBody = ReturnType<typeof messageBody>

export const messageLocation = (id: string) => `/api/sms/v2/messages/${id}/`
