/**
 * The eight message statuses and the transitions allowed between them:
 * `scheduled -> processing -> accepted -> delivered | undeliverable`,
 * `processing -> failed | blocked | unknown`, `unknown -> accepted | failed` (only through
 * verification, never a resend) and `scheduled -> blocked | failed` at due time.
 */
import { Schema } from "effect"

/** Every message status, in lifecycle order. */
export const MessageStatuses = [
  "scheduled",
  "processing",
  "accepted",
  "delivered",
  "undeliverable",
  "blocked",
  "failed",
  "unknown"
] as const

/** One of the eight message statuses. */
export type MessageStatus = (typeof MessageStatuses)[number]

/** Schema accepting exactly the eight status strings. */
export const MessageStatusSchema = Schema.Literals(MessageStatuses)

/** For each status, the statuses it may move to next (empty for final statuses). */
export const transitions: Readonly<Record<MessageStatus, ReadonlyArray<MessageStatus>>> = {
  scheduled: ["processing", "blocked", "failed"],
  processing: ["accepted", "failed", "blocked", "unknown"],
  accepted: ["delivered", "undeliverable"],
  delivered: [],
  undeliverable: [],
  blocked: [],
  failed: [],
  unknown: ["accepted", "failed"]
}

/** The statuses a message never leaves. */
export const finalStatuses = [
  "delivered",
  "undeliverable",
  "failed",
  "blocked"
] as const satisfies ReadonlyArray<MessageStatus>

const finalSet: ReadonlySet<MessageStatus> = new Set(finalStatuses)

/** Whether a message may move directly from `from` to `to`. */
export const canTransition = (from: MessageStatus, to: MessageStatus): boolean => transitions[from].includes(to)

/** Whether a status is final (no transition leaves it). */
export const isFinal = (s: MessageStatus): boolean => finalSet.has(s)
