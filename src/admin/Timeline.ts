/** A message with its timeline, as the operator API answers it (a message read, a simulated receipt). */
import { Effect } from "effect"
import { messageOf } from "../http/Representations.ts"
import type { MessageRow } from "../messages/MessageRow.ts"
import type { MessageStore } from "../messages/MessageStore.ts"

/** The message's body with every status change, oldest first, read through `store`. */
export const withTimeline = (store: MessageStore["Service"], message: MessageRow) =>
  store.timeline(message.organisationId, message.id).pipe(
    Effect.map((timeline) => ({
      ...messageOf(message),
      timeline: timeline.map((t) => ({
        from_status: t.fromStatus,
        to_status: t.toStatus,
        source: t.source,
        at: t.at.toISOString()
      }))
    }))
  )
