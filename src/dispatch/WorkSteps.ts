/**
 * One round of each kind of background work, as plain effects: the loops in Workers.ts repeat
 * them with their sleeps, and tests run them step by step. Each round is bounded (at most
 * `claimBatchSizeMax` messages) and returns how many messages it took.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { AppConfig } from "../Config.ts"
import { Messages, submissionOf, submitTimeoutMs } from "../messages/Messages.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { Settlement } from "../messages/Settlement.ts"
import { now } from "../Time.ts"
import { Provider, type Receipt } from "./Provider.ts"
import { WorkQueue } from "./WorkQueue.ts"

/** Most messages one verification or recovery round takes. */
export const claimBatchSizeMax = 100
/** Most provider calls in flight per process. */
export const providerConcurrencyMax = 16
/**
 * Most due messages one dispatch round claims: as many as can be in flight at once, because a
 * claimed round is finished even when the process is stopping (a claimed message left behind
 * could only end as failed). Shutdown waits at most one provider timeout for it.
 */
export const dispatchBatchSizeMax = providerConcurrencyMax
/** A message still `processing` after this long belongs to a dead process. */
export const staleProcessingMs = 4 * submitTimeoutMs
/** A receipt for a message whose acceptance is still being settled is retried this often, this many times. */
export const receiptRetryMs = 200
export const receiptRetriesMax = 25

export class WorkSteps extends Context.Service<WorkSteps, {
  /**
   * Claims due scheduled messages: those whose sender or organisation became unavailable settle
   * as blocked / failed in the claim's transaction, the others are submitted (bounded
   * concurrency) and settled on the provider's answer.
   */
  readonly dispatchOnce: Effect.Effect<number, SqlError.SqlError>
  /** Asks the provider about unknown messages whose check is due and settles what it knows; never resubmits. */
  readonly verifyOnce: Effect.Effect<number, SqlError.SqlError>
  /** Settles messages a dead process left in `processing`: failed if never handed over, else unknown. */
  readonly recoverOnce: Effect.Effect<number, SqlError.SqlError>
  /**
   * Applies a delivery receipt to an accepted message. A receipt may overtake the settlement of
   * its own acceptance: while that settlement is in flight the receipt is retried; for any other
   * state it is a duplicate, out of order or for a final message, and it is ignored.
   */
  readonly applyReceipt: (receipt: Receipt) => Effect.Effect<void, SqlError.SqlError>
}>()("sms/WorkSteps") {
  static readonly layer = Layer.effect(WorkSteps, Effect.gen(function*() {
    const config = yield* AppConfig
    const queue = yield* WorkQueue
    const messages = yield* Messages
    const settlement = yield* Settlement
    const store = yield* MessageStore
    const provider = yield* Provider
    const sql = yield* SqlClient.SqlClient

    const dispatchOnce = Effect.gen(function*() {
      const at = yield* now
      const claimed = yield* Effect.gen(function*() {
        const rows = yield* queue.claimDue(at, dispatchBatchSizeMax)
        for (const m of rows) {
          if (!m.smsEnabled) yield* settlement.settle(m, { _tag: "SmsUnavailable" }, "dispatch", at)
          else if (!m.senderActive) yield* settlement.settle(m, { _tag: "SenderUnavailable" }, "dispatch", at)
        }
        return rows
      }).pipe(sql.withTransaction)
      const ready = claimed.filter((m) => m.smsEnabled && m.senderActive)
      yield* Effect.forEach(ready, messages.submitAndSettle, { concurrency: providerConcurrencyMax, discard: true })
      return claimed.length
    }).pipe(Effect.uninterruptible, Effect.withSpan("WorkSteps.dispatchOnce"))

    const verifyOnce = Effect.gen(function*() {
      const due = yield* queue.claimVerification(yield* now, claimBatchSizeMax, config.verifyIntervalMs)
      yield* Effect.forEach(due, (m) =>
        provider.status(submissionOf(m)).pipe(
          Effect.flatMap((status) =>
            status === "unknown"
              ? Effect.void
              : Effect.flatMap(now, (at) =>
                settlement.settle(
                  m,
                  status === "accepted" ? { _tag: "Accepted", providerMessageId: `verified-${m.id}` } : { _tag: "NotReceived" },
                  "verification",
                  at
                ))),
          Effect.uninterruptible
        ), { concurrency: providerConcurrencyMax, discard: true })
      return due.length
    }).pipe(Effect.withSpan("WorkSteps.verifyOnce"))

    const recoverOnce = Effect.gen(function*() {
      const at = yield* now
      const stale = yield* queue.staleProcessing(new Date(at.getTime() - staleProcessingMs), claimBatchSizeMax)
      yield* Effect.forEach(stale, (m) =>
        settlement.settle(m, m.maybeSent ? { _tag: "Unknown" } : { _tag: "NeverSent" }, "recovery", at), { discard: true })
      if (stale.length > 0) {
        yield* Effect.logWarning("recovered messages left processing").pipe(Effect.annotateLogs({ count: stale.length }))
      }
      return stale.length
    }).pipe(Effect.withSpan("WorkSteps.recoverOnce"))

    const applyReceipt = (r: Receipt, attempt = 0): Effect.Effect<void, SqlError.SqlError> =>
      Effect.gen(function*() {
        // the timeline records when the service learnt it; delivery_time is the receipt's own time
        const moved = yield* store.transition(r.organisationId, r.messageId, ["accepted"], r.outcome, "receipt", yield* now, {
          deliveryTime: r.at
        })
        if (moved !== undefined || attempt >= receiptRetriesMax) return
        const current = yield* store.find(r.organisationId, r.messageId)
        // `accepted` read back means the acceptance committed just after the update looked: try again now
        if (current?.status === "accepted") return yield* applyReceipt(r, attempt + 1)
        // still being settled (an answer, or the verification that confirmed it): wait a little
        if (current?.status === "processing" || current?.status === "unknown") {
          yield* Effect.sleep(Duration.millis(receiptRetryMs))
          return yield* applyReceipt(r, attempt + 1)
        }
      })

    return WorkSteps.of({ dispatchOnce, verifyOnce, recoverOnce, applyReceipt: (r) => applyReceipt(r) })
  }))
}
