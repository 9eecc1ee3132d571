/**
 * The service's side of `ProviderInbox`: what providers report is committed before they are told
 * it was received. Receipts and late answers arriving together are stored as one set (group
 * commit); a repeated late answer is stored once. A receipt is applied in the statement that
 * stores it when its message is accepted, else stored pending for the applier (Receipts.ts); a
 * set first waits (a second at the most) for the acceptances of its messages that this process
 * is settling, as an SMSC may send a receipt right behind its answer. A provider that reports a
 * round of receipts at once (`receipts`) has it stored as such sets directly; a set that fails
 * goes through the group commit receipt by receipt, so one bad receipt keeps back only itself. A
 * late answer makes its `unknown` message due for verification at once. The parts of
 * mobile-originated messages are stored as sets the same way (inbound/InboundPartStore.ts).
 */
import { Array as Arr, Cause, Effect, Layer } from "effect"
import { makeGroupCommit } from "../db/GroupCommit.ts"
import { AcceptancesInFlight } from "../messages/AcceptancesInFlight.ts"
import { MessageQueueStore } from "../messages/MessageQueueStore.ts"
import { InboundPartStore } from "../inbound/InboundPartStore.ts"
import {
  InboxUnavailable,
  type IncomingPart,
  type IncomingReceipt,
  type LateResult,
  ProviderInbox
} from "../provider/Provider.ts"
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
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.fail(new InboxUnavailable({ cause: Cause.squash(cause) }))
  )

export const inboxLayer = Layer.effect(
  ProviderInbox,
  Effect.gen(function* () {
    const queue = yield* MessageQueueStore
    const receipts = yield* Receipts
    const acceptances = yield* AcceptancesInFlight
    const inboundParts = yield* InboundPartStore

    /** One set of receipts in one statement, once this process's acceptances of their messages have settled. */
    const storeSet = (items: ReadonlyArray<IncomingReceipt>) =>
      acceptances
        .awaitSettled(
          items.map((r) => r.providerRef),
          acceptanceWaitMaxMs
        )
        .pipe(Effect.andThen(receipts.receive(items)))

    const storeReceipts = yield* makeGroupCommit({
      name: "receipt inbox",
      maxSize: inboxSetSizeMax,
      runSet: (items: ReadonlyArray<IncomingReceipt>) =>
        Effect.as(
          storeSet(items),
          items.map(() => undefined)
        )
    })
    /** Whether `effect` succeeded; an interruption stays one. */
    const succeeded = <E>(effect: Effect.Effect<unknown, E>) =>
      effect.pipe(
        Effect.as(true),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : Effect.succeed(false)
        )
      )
    const storeRound = (round: ReadonlyArray<IncomingReceipt>) =>
      Effect.forEach(Arr.chunksOf(round, inboxSetSizeMax), (set) =>
        succeeded(storeSet(set)).pipe(
          Effect.flatMap((stored) =>
            stored
              ? Effect.succeed(set.map(() => true))
              : Effect.forEach(set, (r) => succeeded(storeReceipts(r)), { concurrency: "unbounded" })
          )
        )
      ).pipe(Effect.map((sets) => sets.flat()))

    const storeLateResults = yield* makeGroupCommit({
      name: "late answer inbox",
      maxSize: inboxSetSizeMax,
      runSet: (items: ReadonlyArray<LateResult>) =>
        Effect.gen(function* () {
          yield* queue.storeEvidence(items, yield* now)
          return items.map(() => undefined)
        })
    })

    // the parts of mobile-originated messages: joined, routed and applied later from the table (inbound/Assembler.ts)
    const storeParts = yield* makeGroupCommit({
      name: "inbound part inbox",
      maxSize: inboxSetSizeMax,
      runSet: (items: ReadonlyArray<IncomingPart>) =>
        Effect.gen(function* () {
          yield* inboundParts.store(items, yield* now)
          return items.map(() => undefined)
        })
    })

    return ProviderInbox.of({
      receipt: (r) => unavailable(storeReceipts(r)),
      receipts: storeRound,
      mobileOriginated: (p) => unavailable(storeParts(p)),
      lateResult: (r) => unavailable(storeLateResults(r))
    })
  })
)
