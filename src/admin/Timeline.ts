/** A message with its timeline, as the operator API answers it (a message read, a simulated receipt). */
import { Effect } from "effect"
import type { AtBoundary } from "../db/Boundary.ts"
import { messageBody, type MessageRow } from "../messages/MessageBody.ts"
import type { MessageStore } from "../messages/MessageStore.ts"

/** The message's body with every status change, oldest first, read through `store`. */
export const withTimeline = (store: AtBoundary<MessageStore["Service"]>, message: MessageRow) =>
  store.timeline(message.organisationId, message.id).pipe(Effect.map((timeline) => ({
    ...messageBody(message),
    timeline: timeline.map((t) => ({ from_status: t.fromStatus, to_status: t.toStatus, source: t.source, at: t.at.toISOString() }))
  })))
