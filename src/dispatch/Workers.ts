/**
 * The background fibers of a process, each repeating its WorkSteps as time passes: the
 * dispatcher (a pipeline that claims due messages ahead of its submission window, so the
 * provider is never idle for a round trip), the verifier (unknown results), recovery (messages
 * of dead processes) and the receipt applier. A loop survives failures (a database outage is
 * logged and retried) and stops with the layer's scope: messages already started are finished,
 * claims not yet started are given back.
 *
 * Under the test clock none of them runs: time only moves through the operator's `advance`,
 * which runs the same steps to completion (TestClock.ts).
 */
import { Duration, Effect, Layer, Stream } from "effect"
import { AppConfig } from "../Config.ts"
import { now } from "../Time.ts"
import { WorkerLease } from "../WorkerLease.ts"
import { Receipts, receiptSetSizeMax } from "./Receipts.ts"
import { WorkQueue } from "./WorkQueue.ts"
import { claimSizeMax, dispatchConcurrencyMax, verifyRoundMax, WorkSteps } from "./WorkSteps.ts"

/** Longest a loop sleeps before looking again (new work may come from other processes). */
export const pollIntervalMs = 1000
/** How often recovery looks for messages of dead processes. */
export const recoveryIntervalMs = 2000
/** Shortest sleep of the dispatcher when due messages exist but other processes hold them. */
const busyRetryMs = 50

const sleepMs = (ms: number) => (ms > 0 ? Effect.sleep(Duration.millis(ms)) : Effect.void)

/** How long to sleep until `next` (bounded by the poll interval), from the clock's now. */
const untilMs = (next: Date | undefined, minMs = 0) =>
  Effect.map(now, (at) => next === undefined ? pollIntervalMs : Math.max(minMs, Math.min(pollIntervalMs, next.getTime() - at.getTime())))

const resilient = (name: string, loop: Effect.Effect<void, unknown>) =>
  loop.pipe(
    Effect.catchCause((cause) => Effect.logWarning(`${name} failed; retrying`, cause).pipe(Effect.andThen(sleepMs(pollIntervalMs)))),
    Effect.forever
  )

export const WorkersLive = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const steps = yield* WorkSteps
  const queue = yield* WorkQueue
  const receipts = yield* Receipts
  const { workerId } = yield* WorkerLease
  if (config.clock === "test") return

  const receiptLoop = Effect.gen(function*() {
    if ((yield* steps.applyReceipts) >= receiptSetSizeMax) return
    yield* receipts.awaitWake(yield* untilMs(yield* receipts.nextDue))
  })
  yield* Effect.forkScoped(resilient("receipt applier", receiptLoop))
  if (!config.schedulerEnabled) return

  // claims wait for a due message; the stream pulls the next claim while submissions are in flight
  const nextClaim = Effect.gen(function*() {
    while (true) {
      const claimed = yield* steps.claimDue(claimSizeMax)
      if (claimed.length > 0) return claimed
      yield* sleepMs(yield* untilMs(yield* queue.nextDue, busyRetryMs))
    }
  })
  const dispatcher = Stream.fromIterableEffectRepeat(nextClaim).pipe(
    Stream.mapEffect(steps.dispatch, { concurrency: dispatchConcurrencyMax, unordered: true }),
    Stream.runDrain
  )
  const verifier = Effect.gen(function*() {
    if ((yield* steps.verifyDue) < verifyRoundMax) yield* sleepMs(yield* untilMs(yield* queue.nextVerification))
  })
  const recovery = Effect.gen(function*() {
    yield* steps.recoverAbandoned
    yield* sleepMs(recoveryIntervalMs)
  })

  yield* Effect.addFinalizer(() =>
    queue.releaseClaims(workerId).pipe(Effect.catchCause((cause) => Effect.logWarning("claims not given back", cause)))
  )
  yield* Effect.forkScoped(resilient("dispatcher", dispatcher))
  yield* Effect.forkScoped(resilient("verifier", verifier))
  yield* Effect.forkScoped(resilient("recovery", recovery))
}))
