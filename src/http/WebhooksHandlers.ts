/** The status webhook routes under /api/sms/v2/webhooks/ (docs/decisions.md#webhooks), permission webhooks.manage. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { secretResponse } from "./Answers.ts"
import { idempotentCreation } from "./IdempotentCreation.ts"
import { requirePermission } from "./Permissions.ts"
import { webhookDeliveryOf, webhookOf } from "./Representations.ts"

const manage = requirePermission("webhooks.manage")

export const WebhooksHandlers = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fn(function* (handlers) {
    const webhooks = yield* Webhooks
    return handlers
      .handle("create", ({ headers, payload }) =>
        Effect.gen(function* () {
          const organisationId = yield* manage
          return yield* idempotentCreation("webhooks", payload, (fingerprint) =>
            webhooks
              .create(organisationId, headers["idempotency-key"], fingerprint, {
                url: payload.url,
                events: payload.events,
                description: payload.description ?? undefined
              })
              .pipe(
                // only a message's erasure answers 410, and an endpoint is no message
                Effect.catchTag("PersonalDataErased", Effect.die)
              )
          ).pipe(
            // the answer holds the secret: no browser or proxy keeps a copy
            Effect.map(HttpServerResponse.setHeader("cache-control", "no-store"))
          )
        })
      )
      .handle("list", () =>
        manage.pipe(
          Effect.flatMap(webhooks.list),
          Effect.map((rows) => ({ results: rows.map(webhookOf), next_cursor: null }))
        )
      )
      .handle("get", ({ params }) =>
        manage.pipe(
          Effect.flatMap((org) => webhooks.get(org, params.webhook_id)),
          Effect.map(webhookOf)
        )
      )
      .handle("update", ({ params, payload }) =>
        manage.pipe(
          Effect.flatMap((org) =>
            webhooks.update(org, params.webhook_id, {
              ...(payload.url === undefined ? {} : { url: payload.url }),
              ...(payload.events === undefined ? {} : { events: payload.events }),
              ...(payload.description === undefined ? {} : { description: payload.description }),
              ...(payload.enabled === undefined ? {} : { enabled: payload.enabled })
            })
          ),
          Effect.map(webhookOf)
        )
      )
      .handle("delete", ({ params }) => manage.pipe(Effect.flatMap((org) => webhooks.remove(org, params.webhook_id))))
      .handle("rotateSecret", ({ params }) =>
        manage.pipe(
          Effect.flatMap((org) => webhooks.rotateSecret(org, params.webhook_id)),
          Effect.map((secret) => secretResponse(200, { secret }))
        )
      )
      .handle("deliveries", ({ params, query }) =>
        manage.pipe(
          Effect.flatMap((org) => webhooks.deliveries(org, params.webhook_id, query.cursor)),
          Effect.map((page) => ({ results: page.rows.map(webhookDeliveryOf), next_cursor: page.nextCursor ?? null }))
        )
      )
      .handle("retry", ({ params }) =>
        manage.pipe(Effect.flatMap((org) => webhooks.retry(org, params.webhook_id, params.event_id)))
      )
      .handle("test", ({ params }) => manage.pipe(Effect.flatMap((org) => webhooks.test(org, params.webhook_id))))
  })
)
