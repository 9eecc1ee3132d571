/**
 * The background fibers of a process: the dispatcher (due scheduled messages), the verifier
 * (unknown results), recovery (messages a dead process left in `processing`) and the receipt
 * consumer, each repeating its round of WorkSteps. A loop survives failures (a database outage
 * is logged and retried) and stops with the layer's scope, i.e. on shutdown.
 */
import { Duration, Effect, Layer, Stream } from "effect"
import { AppConfig } from "../Config.ts"
import { now } from "../Time.ts"
import { Provider } from "./Provider.ts"
import { WorkQueue } from "./WorkQueue.ts"
import { claimBatchSizeMax, dispatchBatchSizeMax, WorkSteps } from "./WorkSteps.ts"

/** Longest a loop sleeps before looking again (new work may come from other processes). */
export const pollIntervalMs = 1000
/** Most receipts applied at once (one may wait for its acceptance to settle). */
export const receiptConcurrencyMax = 16
/** How often recovery looks for messages left in `processing`. */
export const recoveryIntervalMs = 30_000

const sleepMs = (ms: number) => (ms > 0 ? Effect.sleep(Duration.millis(ms)) : Effect.void)

const resilient = (name: string, round: Effect.Effect<void, unknown>) =>
  round.pipe(
    Effect.catchCause((cause) => Effect.logWarning(`${name} failed; retrying`, cause).pipe(Effect.andThen(sleepMs(pollIntervalMs)))),
    Effect.forever
  )

export const WorkersLive = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const steps = yield* WorkSteps
  const queue = yield* WorkQueue
  const provider = yield* Provider

  // a full claim means more is due: go on at once; otherwise sleep until the next due time, bounded
  const dispatch = Effect.gen(function*() {
    if ((yield* steps.dispatchOnce) === dispatchBatchSizeMax) return
    const [next, at] = [yield* queue.nextDue, yield* now]
    yield* sleepMs(next === undefined ? pollIntervalMs : Math.min(pollIntervalMs, next.getTime() - at.getTime()))
  })
  const verify = Effect.gen(function*() {
    if ((yield* steps.verifyOnce) < claimBatchSizeMax) yield* sleepMs(Math.min(pollIntervalMs, config.verifyIntervalMs))
  })
  const recover = Effect.gen(function*() {
    if ((yield* steps.recoverOnce) < claimBatchSizeMax) yield* sleepMs(recoveryIntervalMs)
  })
  const receipts = provider.receipts.pipe(
    Stream.mapEffect(
      (r) => steps.applyReceipt(r).pipe(Effect.catchCause((cause) => Effect.logWarning("receipt not applied", cause))),
      { concurrency: receiptConcurrencyMax, unordered: true }
    ),
    Stream.runDrain
  )

  yield* Effect.forkScoped(receipts)
  if (config.schedulerEnabled) {
    yield* Effect.forkScoped(resilient("dispatcher", dispatch))
    yield* Effect.forkScoped(resilient("verifier", verify))
    yield* Effect.forkScoped(resilient("recovery", recover))
  }
}))
