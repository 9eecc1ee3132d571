/** A stored message, as the service reads it. */
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
