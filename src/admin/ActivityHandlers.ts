/** GET /admin/v1/organizations/{org_id}/messages and /batches: an organisation's activity, newest first. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Batches } from "../batches/Batches.ts"
import { positionAfter } from "../domain/NewestFirst.ts"
import { atBoundary } from "../db/Boundary.ts"
import { messageBody } from "../messages/MessageBody.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { AdminApi, listPageMax } from "./AdminApi.ts"

export const ActivityHandlers = HttpApiBuilder.group(AdminApi, "activity", Effect.fn(function*(handlers) {
  const organisations = yield* atBoundary(Organisations)
  const store = yield* atBoundary(MessageStore)
  const batches = yield* atBoundary(Batches)

  return handlers
    .handle("listMessages", ({ params, query }) =>
      Effect.gen(function*() {
        const org = yield* organisations.get(params.org_id)
        const after = yield* positionAfter(query.cursor)
        const page = yield* store.page(org.id, { limit: query.limit ?? listPageMax, after, status: query.status })
        return {
          results: page.rows.map((m) => ({ ...messageBody(m), batch_id: m.batchId, created_at: m.createdAt.toISOString() })),
          next_cursor: page.nextCursor ?? null
        }
      }))
    .handle("listBatches", ({ params, query }) =>
      Effect.gen(function*() {
        const org = yield* organisations.get(params.org_id)
        const page = yield* batches.list(org.id, query.limit ?? listPageMax, yield* positionAfter(query.cursor))
        return { results: page.rows, next_cursor: page.nextCursor ?? null }
      }))
}))
