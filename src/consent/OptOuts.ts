/**
 * An organisation's opt-out list as its API shows it (docs/two-way.md):
 * listed newest first, a number opted out (`api`) or back in. An opt-out from an SMS is made by
 * the assembler of inbound messages (inbound/Assembler.ts) through the same store.
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { type InvalidCursor, NotFound } from "../domain/Errors.ts"
import { type ListPage, pageOf, positionAfter } from "../domain/NewestFirst.ts"
import { Ids } from "../platform/Ids.ts"
import { now } from "../clock/Time.ts"
import { type OptOutRow, type OptOutSource, OptOutStore } from "./OptOutStore.ts"

/** Opt-outs per page. */
export const optOutsPageSize = 100

export class OptOuts extends Context.Service<
  OptOuts,
  {
    readonly list: (
      organisationId: string,
      cursor: string | undefined
    ) => Effect.Effect<ListPage<OptOutRow>, InvalidCursor | DatabaseUnavailable>
    /** Opts the number out (with `source`): its opt-out, and whether it was made now (false: it already was). */
    readonly optOut: (
      organisationId: string,
      phoneNumber: string,
      source: OptOutSource
    ) => Effect.Effect<{ readonly created: boolean; readonly row: OptOutRow }, DatabaseUnavailable>
    /** Opts the number back in; 404 not_found when it was not opted out. */
    readonly optIn: (
      organisationId: string,
      phoneNumber: string,
      source: OptOutSource
    ) => Effect.Effect<void, NotFound | DatabaseUnavailable>
  }
>()("sms/OptOuts") {
  static readonly layer = Layer.effect(
    OptOuts,
    Effect.gen(function* () {
      const store = yield* OptOutStore
      const ids = yield* Ids
      return OptOuts.of({
        list: (organisationId, cursor) =>
          Effect.gen(function* () {
            const after = yield* positionAfter(cursor)
            return pageOf(yield* store.list(organisationId, optOutsPageSize, after), optOutsPageSize)
          }),
        optOut: (organisationId, phoneNumber, source) =>
          Effect.gen(function* () {
            const change = { organisationId, phoneNumber, source, inboundMessageId: null, at: yield* now }
            const created = yield* store.optOut({ ...change, id: yield* ids.uuid })
            const row = yield* store.find(organisationId, phoneNumber)
            // just made or kept: an opt-in between the two statements would be a race an integrator made
            if (row === undefined) return yield* Effect.die(new Error("an opt-out vanished as it was made"))
            return { created, row }
          }),
        optIn: (organisationId, phoneNumber, source) =>
          Effect.gen(function* () {
            const was = yield* store.optIn({
              organisationId,
              phoneNumber,
              source,
              inboundMessageId: null,
              at: yield* now
            })
            if (!was) return yield* NotFound.withMessage("This number is not opted out of this organisation's messages")
          })
      })
    })
  )
}
