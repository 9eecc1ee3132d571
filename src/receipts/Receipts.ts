/**
 * Applying stored delivery receipts (docs/decisions.md#smpp). An SMSC may give an id again (after a
 * restart), so a receipt goes to the newest `accepted` message with its provider id and its
 * number (the receipt's source address, when it gives one), which moves to `delivered` or
 * `undeliverable`. A receipt is decided in the statement that stores it (`receive`, one
 * statement for the inbox's set), so one whose message is accepted is applied at once. One that
 * finds no accepted message stays pending and is tried again with backoff while a message of its
 * number may still take it (its acceptance being settled, or its result unknown); one whose
 * messages are all final is a repeat, counted as ignored and not kept. A receipt that matches
 * nothing is unmatched: it is counted, at most `unmatchedPerRouteMax` are kept per route (the
 * oldest go first) and each goes after `unmatchedTtlMs`.
 *
 * A message left `unknown` without the provider's id (its answer was lost: a crash, a dropped
 * connection) is matched to an unmatched receipt of its route and number whose submit date fits
 * its submission window, when exactly one receipt fits it and it is the only such message the
 * receipt fits (`orphanMatches`, used by the verifier).
 */
import { Context, Duration, Effect, Layer, Metric, Queue } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { countReceiptsApplied, receiptsDropped } from "../observability/Metrics.ts"
import { now } from "../clock/Time.ts"
import type { IncomingReceipt } from "../provider/Provider.ts"
import { type Orphan, ReceiptStore, type RoundCounts } from "./ReceiptStore.ts"

export type { Orphan } from "./ReceiptStore.ts"

/** Most receipts applied in one statement. */
export const receiptSetSizeMax = 500
/** First retry of a receipt its message cannot take yet; doubled each time. */
export const receiptRetryFirstMs = 100
/** Longest wait between two tries of a pending receipt. */
export const receiptRetryMaxMs = 60_000
/** How long an unmatched receipt is kept. */
export const unmatchedTtlMs = 7 * 24 * 3_600_000
/** Most unmatched receipts kept per route: a misbehaving SMSC cannot grow the table without bound. */
export const unmatchedPerRouteMax = 10_000
/** How far the SMSC's clock (its receipts' submit dates) may be from ours when an unknown message is matched. */
export const orphanClockSkewMs = 60_000

/** What one set did. */
export interface ReceiptRound {
  readonly delivered: number
  readonly undeliverable: number
  readonly ignored: number
  /** Left pending (no message can take it, or not yet). */
  readonly pending: number
}

const retry = { firstMs: receiptRetryFirstMs, maxMs: receiptRetryMaxMs }

/** What a set did, from its counts by state and outcome. */
const roundOf = (rows: RoundCounts): ReceiptRound => {
  const count = (state: string, outcome?: string) =>
    rows
      .filter((r) => r.state === state && (outcome === undefined || r.outcome === outcome))
      .reduce((n, r) => n + r.n, 0)
  return {
    delivered: count("applied", "delivered"),
    undeliverable: count("applied", "undeliverable"),
    ignored: count("ignored"),
    pending: count("pending")
  }
}

export class Receipts extends Context.Service<
  Receipts,
  {
    /**
     * Receipts as a provider reports them, in one statement: applied at once when their message is
     * accepted, ignored when it is a repeat, else stored pending for the applier (woken).
     */
    readonly receive: (receipts: ReadonlyArray<IncomingReceipt>) => Effect.Effect<void, DatabaseUnavailable>
    /** Applies up to `receiptSetSizeMax` receipts whose try is due, in one statement. */
    readonly applyDue: Effect.Effect<ReceiptRound, DatabaseUnavailable>
    /** When the next pending receipt is due, if any. */
    readonly nextDue: Effect.Effect<Date | undefined, DatabaseUnavailable>
    /** Removes unmatched receipts older than `unmatchedTtlMs` and beyond `unmatchedPerRouteMax` per route; returns how many. */
    readonly dropUnmatched: Effect.Effect<number, DatabaseUnavailable>
    /**
     * The provider id each of these messages is proved to have by exactly one unmatched receipt
     * (route, number, submit date within the submission window of `windowMs` after `submittedAt`,
     * give or take `orphanClockSkewMs`) that fits no other message; by `organisationId/id`.
     */
    readonly orphanMatches: (
      orphans: ReadonlyArray<Orphan>,
      windowMs: number
    ) => Effect.Effect<ReadonlyMap<string, string>, DatabaseUnavailable>
    /** Makes the pending receipts of these provider ids due now (their message just became accepted). */
    readonly retryNow: (providerRefs: ReadonlyArray<string>) => Effect.Effect<void, DatabaseUnavailable>
    /** Waits until woken, or `ms` at the most. */
    readonly awaitWake: (ms: number) => Effect.Effect<void>
  }
>()("sms/Receipts") {
  static readonly layer = Layer.effect(
    Receipts,
    Effect.gen(function* () {
      const store = yield* ReceiptStore
      const signal = yield* Queue.sliding<true>(1)

      const applyDue = Effect.flatMap(now, (at) => store.applyDue(at, receiptSetSizeMax, retry)).pipe(
        Effect.map(roundOf),
        Effect.tap(countReceiptsApplied),
        Effect.withSpan("Receipts.applyDue")
      )

      const receive = (incoming: ReadonlyArray<IncomingReceipt>) =>
        Effect.flatMap(now, (at) => store.receive(incoming, at, retry)).pipe(
          Effect.map(roundOf),
          Effect.tap(countReceiptsApplied),
          // the pending ones are due after the first retry: the applier may be asleep for longer
          Effect.tap((r) => (r.pending > 0 ? Queue.offer(signal, true) : Effect.void)),
          Effect.asVoid,
          Effect.withSpan("Receipts.receive")
        )

      const dropUnmatched = Effect.gen(function* () {
        const { expired, overCap } = yield* store.dropUnmatched(
          new Date((yield* now).getTime() - unmatchedTtlMs),
          unmatchedPerRouteMax
        )
        yield* Metric.update(receiptsDropped.expired, expired)
        yield* Metric.update(receiptsDropped.over_cap, overCap)
        if (overCap > 0) {
          yield* Effect.logWarning("unmatched receipts dropped: more than the cap per route").pipe(
            Effect.annotateLogs({ dropped: overCap, cap: unmatchedPerRouteMax })
          )
        }
        return expired + overCap
      }).pipe(Effect.withSpan("Receipts.dropUnmatched"))

      return Receipts.of({
        receive,
        applyDue,
        nextDue: store.nextDue,
        dropUnmatched,
        orphanMatches: (orphans, windowMs) =>
          store
            .orphanMatches(
              orphans,
              `${orphanClockSkewMs / 1000} seconds`,
              `${(windowMs + orphanClockSkewMs) / 1000} seconds`
            )
            .pipe(Effect.withSpan("Receipts.orphanMatches")),
        retryNow: (providerRefs) =>
          Effect.flatMap(now, (at) => store.retryAt(providerRefs, at)).pipe(
            Effect.andThen(Queue.offer(signal, true)),
            Effect.asVoid
          ),
        awaitWake: (ms) =>
          Queue.take(signal).pipe(
            Effect.timeoutOrElse({ duration: Duration.millis(ms), orElse: () => Effect.succeed(true) }),
            Effect.asVoid
          )
      })
    })
  ).pipe(Layer.provideMerge(ReceiptStore.layer))
}
