/**
 * The background fibers of a process: the dispatcher (due scheduled messages), the verifier
 * (unknown results), recovery (messages a dead process left in `processing`) and the receipt
 * consumer. Each loop survives failures (a database outage is logged and retried) and stops
 * with the layer's scope, i.e. on shutdown.
 */
import { Duration, Effect, Layer, Stream } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { AppConfig } from "../Config.ts"
import { Messages, submissionOf, submitTimeoutMs } from "../messages/Messages.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { Settlement } from "../messages/Settlement.ts"
import { now } from "../Time.ts"
import { type ClaimedMessage, WorkQueue } from "./WorkQueue.ts"
import { Provider, type Receipt } from "./Provider.ts"

/** Most messages one claim takes. */
export const claimBatchSizeMax = 100
/** Most provider calls in flight per process. */
export const providerConcurrencyMax = 16
/** Longest a loop sleeps before looking again (new work may come from other processes). */
export const pollIntervalMs = 1000
/** A message still `processing` after this long belongs to a dead process. */
export const staleProcessingMs = 4 * submitTimeoutMs
/** A receipt for a message still being settled is retried this often, this many times. */
const receiptRetryMs = 200
const receiptRetriesMax = 25
/** How often recovery looks for such messages. */
export const recoveryIntervalMs = 30_000

const resilient = (name: string, step: Effect.Effect<void, unknown, never>) =>
  step.pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning(`${name} failed; retrying`, cause).pipe(Effect.andThen(Effect.sleep(Duration.millis(pollIntervalMs))))),
    Effect.forever
  )

export const WorkersLive = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const queue = yield* WorkQueue
  const messages = yield* Messages
  const settlement = yield* Settlement
  const store = yield* MessageStore
  const provider = yield* Provider
  const sql = yield* SqlClient.SqlClient

  const dispatch = Effect.gen(function*() {
    const at = yield* now
    // the unavailable ones settle (scheduled -> blocked | failed) inside the claim's transaction
    const claimed = yield* Effect.gen(function*() {
      const rows = yield* queue.claimDue(at, claimBatchSizeMax)
      for (const m of rows) {
        if (!m.smsEnabled) yield* settlement.settle(m, { _tag: "SmsUnavailable" }, "dispatch", at)
        else if (!m.senderActive) yield* settlement.settle(m, { _tag: "SenderUnavailable" }, "dispatch", at)
      }
      return rows
    }).pipe(sql.withTransaction)
    const ready = claimed.filter((m: ClaimedMessage) => m.smsEnabled && m.senderActive)
    yield* Effect.forEach(ready, (m) => Effect.uninterruptible(messages.submitAndSettle(m)), {
      concurrency: providerConcurrencyMax,
      discard: true
    })
    if (claimed.length === claimBatchSizeMax) return
    const [next, after] = [yield* queue.nextDue, yield* now]
    const waitMs = next === undefined ? pollIntervalMs : Math.min(pollIntervalMs, next.getTime() - after.getTime())
    if (waitMs > 0) yield* Effect.sleep(Duration.millis(waitMs))
  })

  const verify = Effect.gen(function*() {
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
    if (due.length < claimBatchSizeMax) yield* Effect.sleep(Duration.millis(Math.min(pollIntervalMs, config.verifyIntervalMs)))
  })

  const recover = Effect.gen(function*() {
    const at = yield* now
    const stale = yield* queue.staleProcessing(new Date(at.getTime() - staleProcessingMs), claimBatchSizeMax)
    yield* Effect.forEach(stale, (m) =>
      settlement.settle(m, m.maybeSent ? { _tag: "Unknown" } : { _tag: "NeverSent" }, "recovery", at), { discard: true })
    if (stale.length > 0) yield* Effect.logWarning("recovered messages left processing").pipe(Effect.annotateLogs({ count: stale.length }))
    if (stale.length < claimBatchSizeMax) yield* Effect.sleep(Duration.millis(recoveryIntervalMs))
  })

  // A receipt can overtake the settlement of its own acceptance (a fast provider): while the
  // message is still `processing` the receipt waits a little; any other state means it is a
  // duplicate, out of order, or for a final message, and it is ignored.
  const applyReceipt = (r: Receipt, attempt: number): Effect.Effect<void, SqlError.SqlError> =>
    store.transition(r.organisationId, r.messageId, ["accepted"], r.outcome, "receipt", r.at, { deliveryTime: r.at }).pipe(
      Effect.flatMap((moved) =>
        moved !== undefined || attempt >= receiptRetriesMax
          ? Effect.void
          : store.find(r.organisationId, r.messageId).pipe(Effect.flatMap((m) =>
            m?.status === "processing"
              ? Effect.sleep(Duration.millis(receiptRetryMs)).pipe(Effect.andThen(applyReceipt(r, attempt + 1)))
              : Effect.void
          )))
    )

  const receipts = provider.receipts.pipe(
    Stream.runForEach((r) =>
      applyReceipt(r, 0).pipe(Effect.catchCause((cause) => Effect.logWarning("receipt not applied", cause)), Effect.forkScoped)
    )
  )

  yield* Effect.forkScoped(receipts)
  if (config.schedulerEnabled) {
    yield* Effect.forkScoped(resilient("dispatcher", dispatch))
    yield* Effect.forkScoped(resilient("verifier", verify))
    yield* Effect.forkScoped(resilient("recovery", recover))
  }
}))
