/** GET /admin/v1/organizations/{org_id}/messages and /batches: an organisation's activity, newest first. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Batches } from "../batches/Batches.ts"
import { pageOf, positionAfter } from "../domain/NewestFirst.ts"
import { batchOf, messageOf } from "../http/Representations.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { AdminApi, listPageMax } from "./AdminApi.ts"

export const ActivityHandlers = HttpApiBuilder.group(
  AdminApi,
  "activity",
  Effect.fn(function* (handlers) {
    const organisations = yield* Organisations
    const store = yield* MessageStore
    const batches = yield* Batches

    return handlers
      .handle("listMessages", ({ params, query }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const after = yield* positionAfter(query.cursor)
          const limit = query.limit ?? listPageMax
          const page = pageOf(yield* store.newestFirst(org.id, { limit, after, status: query.status }), limit)
          return {
            results: page.rows.map((m) => ({
              ...messageOf(m),
              batch_id: m.batchId,
              created_at: m.createdAt.toISOString()
            })),
            next_cursor: page.nextCursor ?? null
          }
        })
      )
      .handle("listBatches", ({ params, query }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const page = yield* batches.list(org.id, query.limit ?? listPageMax, yield* positionAfter(query.cursor))
          return { results: page.rows.map(batchOf), next_cursor: page.nextCursor ?? null }
        })
      )
  })
)
