/**
 * The background work, as plain effects: the loops of BackgroundLoops.ts run them as time passes, and the
 * test clock runs them to completion when it is advanced. Each step is bounded and returns how
 * much it did.
 */
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/Config.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { makeGroupCommit } from "../db/GroupCommit.ts"
import { type ClaimedMessage, MessageQueueStore, type StartRefusal } from "../messages/MessageQueueStore.ts"
import type { MessageRow } from "../messages/MessageRow.ts"
import { Recovery } from "../messages/Recovery.ts"
import { type Outcome, Settlement } from "../messages/Settlement.ts"
import type { VerificationDue } from "../messages/VerificationQueue.ts"
import { submissionOf, submitGuardMarginMs, Submitter } from "../messages/Submitter.ts"
import { Provider, type QueryResult, sendsNothing } from "../provider/Provider.ts"
import { now } from "../clock/Time.ts"
import { ProcessLease } from "../processes/ProcessLease.ts"
import { type Orphan, Receipts } from "../receipts/Receipts.ts"
import { Assembler } from "../inbound/Assembler.ts"

/**
 * Most provider submissions in flight per process (the dispatcher's window). 128 rather than 512:
 * every submission in flight is a fiber the process interleaves with the immediate sends' own,
 * and with 512 an immediate send under a draining backlog waited behind them (scenario 13's p99
 * 133-462 ms against 74-115 ms with 128), while the drain itself kept its rate (bench/HISTORY.md).
 */
export const dispatchConcurrencyMax = 128
/** Seconds of the provider's rate the dispatcher keeps in flight, when the provider has a rate. */
const windowSeconds = 0.4

/**
 * The dispatcher's window for a provider taking `ratePerSecond` submissions a second: at most
 * what it hands over in `windowSeconds` (a claim of as many waits behind it, so a message of
 * another organisation falling due waits about a second at most: docs/decisions.md#fair-share-and-fleet-limits), at most
 * `dispatchConcurrencyMax`.
 */
export const dispatchWindow = (ratePerSecond: number | undefined) =>
  ratePerSecond === undefined
    ? dispatchConcurrencyMax
    : Math.min(dispatchConcurrencyMax, Math.max(1, Math.ceil(ratePerSecond * windowSeconds)))
/** Most unknown messages one verification round takes. */
export const verifyRoundMax = 100
/** Most provider queries in flight per process. */
export const verifyConcurrencyMax = 16

const verificationOutcome = (m: VerificationDue, queried: QueryResult | undefined): Outcome | undefined => {
  if (m.evidence !== null) {
    return m.evidence.result === "accepted" && m.evidence.providerRef !== null
      ? { _tag: "Accepted", providerRef: m.evidence.providerRef }
      : { _tag: "NotReceived" }
  }
  if (queried === undefined || queried._tag === "Unknown") return undefined
  return queried._tag === "Accepted" ? { _tag: "Accepted", providerRef: queried.providerRef } : { _tag: "NotReceived" }
}

export class WorkSteps extends Context.Service<
  WorkSteps,
  {
    /** How many messages the dispatcher keeps in flight, the most one claim takes (dispatchWindow of the provider's rate). */
    readonly window: number
    /**
     * Claims up to `limit` due scheduled messages for this process. When the provider never paces
     * (Provider.paced), the claim starts them too, uninterruptibly: what it started is this
     * process's work (ProcessLease.starting), each one to be handed to `dispatch` whatever happens.
     */
    readonly claimDue: (limit: number) => Effect.Effect<ReadonlyArray<ClaimedMessage>, DatabaseUnavailable>
    /**
     * Submits a message `claimDue` gave: one only claimed first waits for its turn in its route's
     * rate (Provider.pace), then is started; a message another process started is left alone. One
     * whose sender or organisation became unavailable is settled as blocked / failed.
     * Uninterruptible from its start: once started, a message always reaches the provider and its
     * settlement.
     */
    readonly dispatch: (message: ClaimedMessage) => Effect.Effect<void, DatabaseUnavailable>
    /** Dispatches every message due now, `window` at a time; returns how many it claimed. */
    readonly dispatchDue: Effect.Effect<number, DatabaseUnavailable>
    /**
     * Settles up to `verifyRoundMax` unknown messages whose check is due, by the provider's late
     * answer, a receipt that proves it took one whose answer was lost, or a query; never resubmits.
     */
    readonly verifyDue: Effect.Effect<number, DatabaseUnavailable>
    /**
     * The operator asks again about an `unknown` message: checks it now and starts its schedule
     * again; false when the message is not (or no longer) `unknown`.
     */
    readonly verifyAgain: (organisationId: string, id: string) => Effect.Effect<boolean, DatabaseUnavailable>
    /** Settles messages abandoned by dead processes. */
    readonly recoverAbandoned: Effect.Effect<number, DatabaseUnavailable>
    /** Applies one set of due receipts; returns how many it settled (applied or ignored). */
    readonly applyReceipts: Effect.Effect<number, DatabaseUnavailable>
    /** Removes unmatched receipts past their time or their route's cap; returns how many. */
    readonly dropUnmatchedReceipts: Effect.Effect<number, DatabaseUnavailable>
    /** Makes one round of inbound messages from their stored parts (inbound/Assembler.ts); returns how many. */
    readonly assembleInbound: Effect.Effect<number, DatabaseUnavailable>
  }
>()("sms/WorkSteps") {
  static readonly layer = Layer.effect(
    WorkSteps,
    Effect.gen(function* () {
      const config = yield* AppConfig
      const queue = yield* MessageQueueStore
      const settlement = yield* Settlement
      const submitter = yield* Submitter
      const recovery = yield* Recovery
      const receipts = yield* Receipts
      const assembler = yield* Assembler
      const provider = yield* Provider
      const lease = yield* ProcessLease
      const { workerId } = lease
      const window = dispatchWindow(provider.ratePerSecond)

      // messages are started in sets as their submission slots free up
      const start = yield* makeGroupCommit({
        name: "dispatch start",
        maxSize: window,
        runSet: (messages: ReadonlyArray<MessageRow>) =>
          Effect.flatMap(now, (at) => queue.start(messages, at, workerId))
      })

      // only the messages this process can submit: a route whose binds other processes hold is theirs
      // (a process on standby for every route does not even look: a backlog would be read for nothing)
      const claimDue = (limit: number): Effect.Effect<ReadonlyArray<ClaimedMessage>, DatabaseUnavailable> =>
        Effect.suspend(() => {
          const sendable = provider.sendable()
          if (sendsNothing(sendable)) return Effect.succeed([])
          const claim = Effect.flatMap(now, (at) => queue.claimDue(at, limit, workerId, sendable, !provider.paced))
          return provider.paced ? claim : lease.starting(claim)
        })

      /** A message after its start (or its refusal): submitted and settled, or settled as refused. */
      const proceed = (message: MessageRow, refusal: StartRefusal | undefined) =>
        Effect.gen(function* () {
          if (refusal === "gone") return
          if (refusal === "sms_unavailable") yield* settlement.settle(message, { _tag: "SmsUnavailable" }, "dispatch")
          else if (refusal === "opted_out") yield* settlement.settle(message, { _tag: "OptedOut" }, "opted_out")
          else if (refusal === "sender_unavailable")
            yield* settlement.settle(message, { _tag: "SenderUnavailable" }, "dispatch")
          else yield* submitter.submitAndSettle({ ...message, status: "processing" })
        })

      // this process's work on the message from its start on (ProcessLease.working): a start whose
      // commit answer is lost leaves the message `processing`, then recovered as never sent
      const dispatch = ({ claim, ...message }: ClaimedMessage) =>
        claim === "claimed"
          ? // its turn in the route's rate first, still only claimed (interruptible: a claim is given back)
            provider
              .pace(message.toNumber)
              .pipe(
                Effect.andThen(
                  lease.working(
                    message.id,
                    Effect.flatMap(start(message), (refusal) => proceed(message, refusal)).pipe(Effect.uninterruptible)
                  )
                )
              )
          : lease
              .resume(message.id, proceed(message, claim === "started" ? undefined : claim))
              .pipe(Effect.uninterruptible)

      const dispatchDue = Effect.gen(function* () {
        let claimed = 0
        while (true) {
          const batch = yield* claimDue(window)
          if (batch.length === 0) return claimed
          claimed += batch.length
          yield* Effect.forEach(batch, dispatch, { concurrency: window, discard: true })
        }
      }).pipe(Effect.withSpan("WorkSteps.dispatchDue"))

      /** The unknown messages of a round that only a receipt can tell about: no provider id, no late answer. */
      const orphansOf = (due: ReadonlyArray<VerificationDue>): ReadonlyArray<Orphan> =>
        due.flatMap((m) => {
          const route = provider.routeOf(m.toNumber)
          return m.evidence === null && m.providerRef === null && m.submittedAt !== null && route !== undefined
            ? [{ organisationId: m.organisationId, id: m.id, to: m.toNumber, route, submittedAt: m.submittedAt }]
            : []
        })

      // the late answer if the provider gave one, a receipt that proves it took a message whose
      // answer was lost, else a query; settled only when it tells something. Then the matched
      // messages' receipts apply, now that their messages are accepted.
      const verify = (due: ReadonlyArray<VerificationDue>) =>
        Effect.gen(function* () {
          const matched = yield* receipts.orphanMatches(orphansOf(due), provider.submitDeadlineMs + submitGuardMarginMs)
          yield* Effect.forEach(
            due,
            (m) =>
              Effect.gen(function* () {
                const byReceipt = matched.get(`${m.organisationId}/${m.id}`)
                if (byReceipt !== undefined)
                  return yield* settlement.settle(m, { _tag: "Accepted", providerRef: byReceipt }, "matched_receipt")
                const queried =
                  m.evidence === null
                    ? yield* provider.query({ ...submissionOf(m), providerRef: m.providerRef })
                    : undefined
                const outcome = verificationOutcome(m, queried)
                if (outcome !== undefined) yield* settlement.settle(m, outcome, "verification")
              }).pipe(Effect.uninterruptible),
            { concurrency: verifyConcurrencyMax, discard: true }
          )
          yield* receipts.retryNow([...matched.values()])
        })

      const verifyDue = Effect.gen(function* () {
        const due = yield* queue.claimVerification(yield* now, verifyRoundMax, config.verifyIntervalMs)
        yield* verify(due)
        return due.length
      }).pipe(Effect.withSpan("WorkSteps.verifyDue"))

      const verifyAgain = (organisationId: string, id: string) =>
        Effect.gen(function* () {
          const claimed = yield* queue.claimVerificationAgain(organisationId, id, yield* now, config.verifyIntervalMs)
          if (claimed === undefined) return false
          yield* verify([claimed])
          return true
        }).pipe(Effect.withSpan("WorkSteps.verifyAgain"))

      return WorkSteps.of({
        window,
        claimDue,
        dispatch,
        dispatchDue,
        verifyDue,
        verifyAgain,
        recoverAbandoned: recovery.recoverAbandoned.pipe(Effect.tap(() => recovery.forgetDeadWorkers)),
        applyReceipts: Effect.map(receipts.applyDue, (r) => r.delivered + r.undeliverable + r.ignored),
        dropUnmatchedReceipts: receipts.dropUnmatched,
        assembleInbound: assembler.assembleDue
      })
    })
  )
}
