/**
 * The service's side of `ProviderInbox`: what providers report is committed before they are told
 * it was received. Receipts and late answers arriving together are stored as one set (group
 * commit); a repeated late answer is stored once. A receipt is applied in the statement that
 * stores it when its message is accepted, else stored pending for the applier (Receipts.ts); a
 * set first waits (a second at the most) for the acceptances of its messages that this process
 * is settling, as an SMSC may send a receipt right behind its answer. A late answer makes its
 * `unknown` message due for verification at once.
 */
import { Cause, Effect, Layer } from "effect"
import { makeGroupCommit } from "../db/GroupCommit.ts"
import { AcceptancesInFlight } from "../messages/AcceptancesInFlight.ts"
import { MessageQueueStore } from "../messages/MessageQueueStore.ts"
import { InboxUnavailable, type IncomingReceipt, type LateResult, ProviderInbox } from "../provider/Provider.ts"
import { now } from "../clock/Time.ts"
import { Receipts } from "./Receipts.ts"

/** Most receipts (or late answers) stored in one statement. */
export const inboxSetSizeMax = 500
/**
 * Longest a set of receipts waits for the acceptances of its messages that this process is
 * settling (AcceptancesInFlight.ts); then it is stored as it is, its early receipts pending.
 */
export const acceptanceWaitMaxMs = 1_000

/** Whatever kept it from being stored, the provider must keep what it reported and tell us again. */
const unavailable = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, InboxUnavailable> =>
  Effect.catchCause(effect, (cause) =>
    Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : Effect.fail(new InboxUnavailable({ cause: Cause.squash(cause) })))

export const InboxLive = Layer.effect(ProviderInbox, Effect.gen(function*() {
  const queue = yield* MessageQueueStore
  const receipts = yield* Receipts
  const acceptances = yield* AcceptancesInFlight

  const storeReceipts = yield* makeGroupCommit({
    name: "receipt inbox",
    maxSize: inboxSetSizeMax,
    runSet: (items: ReadonlyArray<IncomingReceipt>) =>
      acceptances.awaitSettled(items.map((r) => r.providerRef), acceptanceWaitMaxMs).pipe(
        Effect.andThen(receipts.receive(items)),
        Effect.as(items.map(() => undefined))
      )
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
