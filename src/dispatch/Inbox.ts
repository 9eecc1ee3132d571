/**
 * The service's side of `ProviderInbox`: what providers report is committed before they are told
 * it was received. Receipts and late answers arriving together are stored as one set (group
 * commit); a repeated late answer is stored once. Receipts are applied later by Receipts.ts; a
 * late answer makes its `unknown` message due for verification at once. A repeated receipt is
 * stored again (it is told from a new one only once matched to its message).
 */
import { Cause, Effect, Layer } from "effect"
import { makeGroupCommit } from "../db/GroupCommit.ts"
import { MessageQueueStore } from "../messages/MessageQueueStore.ts"
import { InboxUnavailable, type IncomingReceipt, type LateResult, ProviderInbox } from "../provider/Provider.ts"
import { now } from "../clock/Time.ts"
import { ReceiptStore } from "./ReceiptStore.ts"
import { Receipts } from "./Receipts.ts"

/** Most receipts (or late answers) stored in one statement. */
export const inboxSetSizeMax = 500

/** Whatever kept it from being stored, the provider must keep what it reported and tell us again. */
const unavailable = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, InboxUnavailable> =>
  Effect.catchCause(effect, (cause) =>
    Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : Effect.fail(new InboxUnavailable({ cause: Cause.squash(cause) })))

export const InboxLive = Layer.effect(ProviderInbox, Effect.gen(function*() {
  const store = yield* ReceiptStore
  const queue = yield* MessageQueueStore
  const receipts = yield* Receipts

  const storeReceipts = yield* makeGroupCommit({
    name: "receipt inbox",
    maxSize: inboxSetSizeMax,
    runSet: (items: ReadonlyArray<IncomingReceipt>) =>
      Effect.gen(function*() {
        yield* store.insert(items, yield* now)
        yield* receipts.wake
        return items.map(() => undefined)
      })
  })

  const storeLateResults = yield* makeGroupCommit({
    name: "late answer inbox",
    maxSize: inboxSetSizeMax,
    runSet: (items: ReadonlyArray<LateResult>) =>
      Effect.gen(function*() {
        yield* queue.storeEvidence(items, yield* now)
        return items.map(() => undefined)
      })
  })

  return ProviderInbox.of({
    receipt: (r) => unavailable(storeReceipts(r)),
    lateResult: (r) => unavailable(storeLateResults(r))
  })
}))
