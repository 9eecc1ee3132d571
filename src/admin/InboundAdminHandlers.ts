/**
 * The operator's routes of two-way messages (docs/two-way.md): an
 * organisation's inbound numbers given, taken and listed; its inbound messages and opt-out list,
 * read as its API reads them (scoped by the organisation); and the inbound messages of every
 * organisation (`?routed=false`: those none took).
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OptOuts } from "../consent/OptOuts.ts"
import { optOutWire } from "../consent/OptOutWire.ts"
import { InboundMessages } from "../inbound/InboundMessages.ts"
import { InboundNumbers } from "../inbound/InboundNumbers.ts"
import { inboundWire } from "../inbound/InboundWire.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { AdminApi } from "./AdminApi.ts"

export const InboundAdminHandlers = HttpApiBuilder.group(
  AdminApi,
  "inbound",
  Effect.fn(function* (handlers) {
    const organisations = yield* Organisations
    const numbers = yield* InboundNumbers
    const inbound = yield* InboundMessages
    const optOuts = yield* OptOuts
    return handlers
      .handle("assignNumber", ({ params, payload }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          return yield* numbers.assign(org.id, params.number, payload.keyword)
        })
      )
      .handle("removeNumber", ({ params }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          yield* numbers.remove(org.id, params.number)
        })
      )
      .handle("listNumbers", ({ params }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          return { results: yield* numbers.list(org.id) }
        })
      )
      .handle("listOrganisationMessages", ({ params, query }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const page = yield* inbound.list(org.id, query.cursor)
          return { results: page.rows.map(inboundWire), next_cursor: page.nextCursor ?? null }
        })
      )
      .handle("listOptOuts", ({ params, query }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const page = yield* optOuts.list(org.id, query.cursor)
          return { results: page.rows.map(optOutWire), next_cursor: page.nextCursor ?? null }
        })
      )
      .handle("listMessages", ({ query }) =>
        Effect.gen(function* () {
          const routed = query.routed === undefined ? undefined : query.routed === "true"
          const page = yield* inbound.listAll(routed, query.cursor)
          return {
            results: page.rows.map((m) => ({ ...inboundWire(m), org_id: m.organisationId })),
            next_cursor: page.nextCursor ?? null
          }
        })
      )
  })
)
