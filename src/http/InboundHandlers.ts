/** GET /api/sms/v2/inbound-messages/ and /{id}/ (docs/two-way.md), permission inbound.read. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { InboundMessages } from "../inbound/InboundMessages.ts"
import { inboundWire } from "../inbound/InboundWire.ts"
import { requirePermission } from "./Permissions.ts"

const read = requirePermission("inbound.read")

export const InboundHandlers = HttpApiBuilder.group(
  Api,
  "inbound-messages",
  Effect.fn(function* (handlers) {
    const inbound = yield* InboundMessages
    return handlers
      .handle("list", ({ query }) =>
        read.pipe(
          Effect.flatMap((org) => inbound.list(org, query.cursor)),
          Effect.map((page) => ({ results: page.rows.map(inboundWire), next_cursor: page.nextCursor ?? null }))
        )
      )
      .handle("get", ({ params }) =>
        read.pipe(
          Effect.flatMap((org) => inbound.get(org, params.inbound_message_id)),
          Effect.map(inboundWire)
        )
      )
  })
)
