/**
 * A message with its timeline, as the operator API answers it (a message read, a simulated
 * receipt). Its move to `accepted` names the route that took it (docs/operators.md#fallback-routes),
 * the route's name that starts its provider ref.
 */
import { Effect } from "effect"
import { messageOf } from "../http/Representations.ts"
import type { MessageRow } from "../messages/MessageRow.ts"
import type { MessageStore } from "../messages/MessageStore.ts"

/** The route's name in a provider ref (`<route>:<id>`). */
const routeOfRef = (ref: string): string => ref.slice(0, ref.indexOf(":"))

/** The message's body with every status change, oldest first, read through `store`. */
export const withTimeline = (store: MessageStore["Service"], message: MessageRow) =>
  Effect.all([store.timeline(message.organisationId, message.id), store.providerRefOf(message.id)]).pipe(
    Effect.map(([timeline, ref]) => ({
      ...messageOf(message),
      timeline: timeline.map((t) => ({
        from_status: t.fromStatus,
        to_status: t.toStatus,
        source: t.source,
        at: t.at.toISOString(),
        ...(t.toStatus === "accepted" && typeof ref?.providerRef === "string"
          ? { route: routeOfRef(ref.providerRef) }
          : {})
      }))
    }))
  )
