/**
 * The background fibers of a process, each repeating its WorkSteps as time passes: the
 * dispatcher (due messages claimed as its window frees up, while the rest are in flight, so the
 * provider is never idle for a round trip), the verifier (unknown results), recovery (messages
 * of dead processes), the receipt applier, the assembler of inbound messages (inbound/Assembler.ts), the webhook deliveries, once a minute the removal of
 * unmatched receipts past their time, and retention (messages past it erased, finished ones
 * compacted, the monthly partitions of messages and of the ledger journal kept: a past month of
 * erased messages packed and dropped). A loop survives failures and stops
 * with the layer's scope: messages already started are finished, claims not yet started are
 * given back. A database outage is logged once per loop (WARN when it starts, INFO when the loop
 * works again); any other failure, a fault of ours, at ERROR each time.
 *
 * Under the test clock none of them runs: time only moves through the operator's `advance`,
 * which runs the same steps to completion (DueWork.ts `advanceTo`).
 */
import { Cause, Duration, Effect, FiberSet, Layer, Queue } from "effect"
import { AppConfig } from "../config/Config.ts"
import { isDatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { makeOutageLog, type OutageLog } from "../observability/RecurringLogs.ts"
import { now } from "../clock/Time.ts"
import { ProcessLease } from "../processes/ProcessLease.ts"
import { Compaction, compactionSetMax } from "../messages/Compaction.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"
import { Receipts, receiptSetSizeMax } from "../receipts/Receipts.ts"
import { Erasure, retentionSetMax } from "../messages/Erasure.ts"
import { JournalPartitions } from "../ledger/JournalPartitions.ts"
import { MessagePartitions } from "../messages/MessagePartitions.ts"
import { type ClaimedMessage, MessageQueueStore } from "../messages/MessageQueueStore.ts"
import { Provider } from "../provider/Provider.ts"
import { Assembler, assembleRoundMax, inboundRetentionSetMax } from "../inbound/Assembler.ts"
import { verifyRoundMax, WorkSteps } from "./WorkSteps.ts"

/** Longest a loop sleeps before looking again (new work may come from other processes). */
export const pollIntervalMs = 1000
/** How often recovery looks for messages of dead processes. */
export const recoveryIntervalMs = 2000
/** Shortest sleep of the dispatcher when its claim found nothing though a due message is not claimed (another process's claim statement had it locked). */
const busyRetryMs = 50
/** The same when some routes' binds are held by other processes: due messages may be theirs, not to be claimed here. */
const standbyRetryMs = 250
/**
 * How often the assembler looks for inbound parts to join: a part is acknowledged once stored,
 * and its message made from the table within this.
 */
export const inboundPollMs = 250
/** How often unmatched receipts past their time (or their route's cap) are removed. */
export const receiptCleanupIntervalMs = 60_000
/**
 * How often retention looks for messages past their retention (docs/decisions.md#retention allows an
 * hour); while it finds full sets it goes on after a pause of `retentionPauseRatio` times the
 * set's own time (at least `retentionPauseMs`), so that a backlog is caught up with at most a
 * fifth of the time, the rest left to the admissions: at full speed, erasure took a fifth of
 * scenario 1's throughput on two cores (bench/HISTORY.md, scenario 16).
 */
export const retentionIntervalMs = 300_000
const retentionPauseMs = 20
export const retentionPauseRatio = 4

const sleepMs = (ms: number) => (ms > 0 ? Effect.sleep(Duration.millis(ms)) : Effect.void)

/** How long to sleep until `next` (bounded by the poll interval), from the clock's now. */
const untilMs = (next: Date | undefined, minMs = 0) =>
  Effect.map(now, (at) =>
    next === undefined ? pollIntervalMs : Math.max(minMs, Math.min(pollIntervalMs, next.getTime() - at.getTime()))
  )

/** Logs a failure of `name`: an outage through `outage` (once), a fault of ours at ERROR. */
const logFailure = (name: string, outage: OutageLog) => (cause: Cause.Cause<unknown>) =>
  isDatabaseUnavailable(Cause.squash(cause))
    ? outage.failed(`${name} failed; retrying`, cause)
    : Effect.logError(`${name} failed; retrying`, cause)

/** Runs `loop` for ever, through its failures; `outage` logs the transient ones (its success is told by the loop or here). */
const resilient = (name: string, loop: Effect.Effect<void, unknown>, outage: OutageLog = makeOutageLog()) =>
  loop.pipe(
    Effect.tap(() => outage.succeeded(`${name} works again`)),
    Effect.catchCause((cause) => logFailure(name, outage)(cause).pipe(Effect.andThen(sleepMs(pollIntervalMs)))),
    Effect.forever
  )

export const backgroundLoopsLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const provider = yield* Provider
    const steps = yield* WorkSteps
    const queue = yield* MessageQueueStore
    const receipts = yield* Receipts
    const { workerId } = yield* ProcessLease
    const erasure = yield* Erasure
    const compaction = yield* Compaction
    const partitions = yield* JournalPartitions
    const messagePartitions = yield* MessagePartitions
    const deliveries = yield* Deliveries
    const assembler = yield* Assembler
    if (config.clock === "test") return

    // webhook deliveries go out whether or not this process dispatches messages
    yield* Effect.forkScoped(resilient("webhook deliveries", deliveries.loop))

    const receiptLoop = Effect.gen(function* () {
      if ((yield* steps.applyReceipts) >= receiptSetSizeMax) return
      yield* receipts.awaitWake(yield* untilMs(yield* receipts.nextDue))
    })
    yield* Effect.forkScoped(resilient("receipt applier", receiptLoop))
    // inbound messages are made from their parts whether or not this process dispatches messages
    const assemblerLoop = Effect.gen(function* () {
      if ((yield* steps.assembleInbound) >= assembleRoundMax) return
      yield* sleepMs(inboundPollMs)
    })
    yield* Effect.forkScoped(resilient("inbound assembler", assemblerLoop))
    // any process may erase: sets skip the messages another one holds
    const retention = Effect.gen(function* () {
      const [took, [erased, compacted, inboundErased]] = yield* Effect.timed(
        Effect.all([erasure.eraseExpired, compaction.compactOnce, assembler.eraseExpired])
      )
      let busyMs = Duration.toMillis(took)
      let more = erased >= retentionSetMax || compacted >= compactionSetMax || inboundErased >= inboundRetentionSetMax
      // once erasure has caught up, the monthly partitions: those ahead made, a past month of erased
      // messages packed set after set, the emptied partitions of messages and of the ledger journal dropped
      if (!more) {
        const [tookUpkeep, done] = yield* Effect.timed(
          Effect.zipWith(messagePartitions.upkeep, partitions.upkeep, (a, b) => a + b)
        )
        busyMs += Duration.toMillis(tookUpkeep)
        more = done > 0
      }
      yield* sleepMs(more ? Math.max(retentionPauseMs, busyMs * retentionPauseRatio) : retentionIntervalMs)
    })
    yield* Effect.forkScoped(resilient("retention", retention))
    if (!config.schedulerEnabled) return

    // up to `window` messages in flight, each dispatched in a fiber of its own: once a quarter of the
    // window is free, the dispatcher claims as many due messages as are free (the others still in
    // flight, so the provider is never idle for a round trip); a claim and the forks of what it took
    // are one uninterruptible step, as a claim may start them (WorkSteps.claimDue)
    const dispatcherOutage = makeOutageLog()
    const slots = { free: steps.window }
    const slotFreed = yield* Queue.sliding<true>(1)
    const refillAt = Math.ceil(steps.window / 4)
    const dispatchOne = (message: ClaimedMessage) =>
      steps
        .dispatch(message)
        .pipe(
          Effect.catchCause(logFailure("dispatcher", dispatcherOutage)),
          Effect.ensuring(Effect.sync(() => slots.free++).pipe(Effect.andThen(Queue.offer(slotFreed, true))))
        )
    yield* Effect.addFinalizer(() =>
      queue
        .releaseClaims(workerId)
        .pipe(Effect.catchCause((cause) => Effect.logWarning("claims not given back", cause)))
    )
    // made after the finalizer above, so closed before it: messages started are finished, then the claims left are given back
    const inFlight = yield* FiberSet.make<void, never>()
    const dispatcher = Effect.gen(function* () {
      while (slots.free < refillAt) yield* Queue.take(slotFreed)
      const claimed = yield* Effect.gen(function* () {
        const messages = yield* steps.claimDue(slots.free)
        slots.free -= messages.length
        for (const message of messages) yield* FiberSet.run(inFlight, dispatchOne(message))
        return messages.length
      }).pipe(Effect.uninterruptible)
      yield* dispatcherOutage.succeeded("dispatcher works again")
      if (claimed > 0) return
      // until a message may be claimed: one due and not claimed (held by a statement's lock, or
      // of a route another process binds) is looked at again shortly; due ones all claimed by
      // others are waited out until their claims run out (a dead process's, `claimLeaseMs`)
      yield* sleepMs(
        yield* untilMs(
          yield* queue.nextClaimable(yield* now),
          provider.sendable()._tag === "All" ? busyRetryMs : standbyRetryMs
        )
      )
    })
    const verifier = Effect.gen(function* () {
      if ((yield* steps.verifyDue) < verifyRoundMax) yield* sleepMs(yield* untilMs(yield* queue.nextVerification(null)))
    })
    const recovery = Effect.gen(function* () {
      yield* steps.recoverAbandoned
      yield* sleepMs(recoveryIntervalMs)
    })
    const receiptCleanup = Effect.gen(function* () {
      yield* steps.dropUnmatchedReceipts
      yield* assembler.forgetJoined
      yield* sleepMs(receiptCleanupIntervalMs)
    })

    yield* Effect.forkScoped(resilient("dispatcher", dispatcher, dispatcherOutage))
    yield* Effect.forkScoped(resilient("verifier", verifier))
    yield* Effect.forkScoped(resilient("recovery", recovery))
    yield* Effect.forkScoped(resilient("receipt cleanup", receiptCleanup))
  })
)
