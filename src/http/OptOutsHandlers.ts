/** The opt-out list under /api/sms/v2/opt-outs/ (docs/two-way.md), permission contacts.manage. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { OptOuts } from "../consent/OptOuts.ts"
import { optOutWire } from "../consent/OptOutWire.ts"
import { requirePermission } from "./Permissions.ts"

const manage = requirePermission("contacts.manage")

export const OptOutsHandlers = HttpApiBuilder.group(
  Api,
  "opt-outs",
  Effect.fn(function* (handlers) {
    const optOuts = yield* OptOuts
    return handlers
      .handle("list", ({ query }) =>
        manage.pipe(
          Effect.flatMap((org) => optOuts.list(org, query.cursor)),
          Effect.map((page) => ({ results: page.rows.map(optOutWire), next_cursor: page.nextCursor ?? null }))
        )
      )
      .handle("put", ({ params }) =>
        Effect.gen(function* () {
          const org = yield* manage
          const { created, row } = yield* optOuts.optOut(org, params.phone_number, "api")
          return HttpServerResponse.jsonUnsafe(optOutWire(row), { status: created ? 201 : 200 })
        })
      )
      .handle("delete", ({ params }) =>
        manage.pipe(Effect.flatMap((org) => optOuts.optIn(org, params.phone_number, "api")))
      )
  })
)
