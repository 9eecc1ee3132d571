/**
 * Inbound messages as the APIs show them (docs/two-way.md): an
 * organisation's, newest first, 100 a page, and one by id (another organisation's answers 404);
 * for the operator, the unrouted ones (or all), newest first.
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { type InvalidCursor, NotFound } from "../domain/Errors.ts"
import { type ListPage, pageOf, positionAfter } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import { type InboundMessageRow, InboundMessageStore } from "./InboundMessageStore.ts"

/** Inbound messages per page. */
export const inboundPageSize = 100

/** The row as a newest-first list position. */
type Listed = InboundMessageRow & { readonly createdAt: Date }
const listed = (rows: ReadonlyArray<InboundMessageRow>): ReadonlyArray<Listed> =>
  rows.map((r) => ({ ...r, createdAt: r.receivedAt }))

export class InboundMessages extends Context.Service<
  InboundMessages,
  {
    readonly list: (
      organisationId: string,
      cursor: string | undefined
    ) => Effect.Effect<ListPage<Listed>, InvalidCursor | DatabaseUnavailable>
    readonly get: (
      organisationId: string,
      id: string
    ) => Effect.Effect<InboundMessageRow, NotFound | DatabaseUnavailable>
    /** Every organisation's (the operator's view): the unrouted ones with `routed` false, the routed with true, all without. */
    readonly listAll: (
      routed: boolean | undefined,
      cursor: string | undefined
    ) => Effect.Effect<ListPage<Listed>, InvalidCursor | DatabaseUnavailable>
  }
>()("sms/InboundMessages") {
  static readonly layer = Layer.effect(
    InboundMessages,
    Effect.gen(function* () {
      const store = yield* InboundMessageStore
      return InboundMessages.of({
        list: (organisationId, cursor) =>
          Effect.gen(function* () {
            const after = yield* positionAfter(cursor)
            return pageOf(listed(yield* store.list(organisationId, inboundPageSize, after)), inboundPageSize)
          }),
        get: (organisationId, id) =>
          Effect.gen(function* () {
            const row = isUuid(id) ? yield* store.find(organisationId, id) : undefined
            if (row === undefined) return yield* NotFound.withMessage("No such inbound message in this organisation")
            return row
          }),
        listAll: (routed, cursor) =>
          Effect.gen(function* () {
            const after = yield* positionAfter(cursor)
            return pageOf(listed(yield* store.listAll(routed, inboundPageSize, after)), inboundPageSize)
          })
      })
    })
  )
}
