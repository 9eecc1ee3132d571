/**
 * GET /admin/v1/organizations/{org_id}/webhooks, PATCH .../webhooks/{id} and GET
 * .../webhooks/{id}/deliveries: the operator's view of an organisation's endpoints (the console's too),
 * each with `url_refused`: why the address rules refuse its URL now, if they do.
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { webhookDeliveryOf, webhookOf } from "../http/Representations.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { AdminApi } from "./AdminApi.ts"

export const WebhookAdminHandlers = HttpApiBuilder.group(
  AdminApi,
  "webhooks",
  Effect.fn(function* (handlers) {
    const organisations = yield* Organisations
    const webhooks = yield* Webhooks
    return handlers
      .handle("list", ({ params }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const results = yield* Effect.forEach(
            yield* webhooks.list(org.id),
            (e) => Effect.map(webhooks.urlRefusal(e.url), (why) => ({ ...webhookOf(e), url_refused: why })),
            { concurrency: "unbounded" }
          )
          return { results, next_cursor: null }
        })
      )
      .handle("setEnabled", ({ params, payload }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          return webhookOf(yield* webhooks.update(org.id, params.webhook_id, { enabled: payload.enabled }))
        })
      )
      .handle("deliveries", ({ params, query }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const page = yield* webhooks.deliveries(org.id, params.webhook_id, query.cursor)
          return { results: page.rows.map(webhookDeliveryOf), next_cursor: page.nextCursor ?? null }
        })
      )
  })
)
