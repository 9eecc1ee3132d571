/**
 * All the work that falls due as time passes, run to completion on demand: what the test clock's
 * `advance` does (docs/decisions.md#the-test-clock). It moves the clock from one due instant to the next up to
 * the target, and at each one runs every step of WorkSteps (and the simulator's receipts) until
 * none has anything left, so that when it returns, everything due by the target has happened in
 * order: due messages dispatched to their simulated outcome, receipts delivered, verifications
 * run, abandoned messages recovered, unmatched receipts past their time removed, messages past
 * their retention erased, finished messages compacted (Compaction.ts), webhook deliveries (and
 * their retries) attempted, inbound messages made from their parts (and those missing parts for 10
 * minutes made incomplete), their joined parts forgotten and their text erased past retention, the monthly partitions of messages (MessagePartitions.ts: past months
 * of erased messages packed) and of the ledger journal (JournalPartitions.ts) made ahead and the
 * emptied ones dropped. Credits expire by themselves: expiry is judged by the date.
 */
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { SimulatorControl } from "../provider/SimulatorControl.ts"
import { ServiceClock } from "../clock/ServiceClock.ts"
import { now } from "../clock/Time.ts"
import { Erasure } from "../messages/Erasure.ts"
import { MessagePartitions } from "../messages/MessagePartitions.ts"
import { MessageQueueStore } from "../messages/MessageQueueStore.ts"
import { Compaction } from "../messages/Compaction.ts"
import { JournalPartitions } from "../ledger/JournalPartitions.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"
import { Assembler } from "../inbound/Assembler.ts"
import { WorkSteps } from "./WorkSteps.ts"

/** Most passes over the steps at one instant before giving up (a bug would otherwise spin). */
const passesMax = 1_000

export class DueWork extends Context.Service<
  DueWork,
  {
    /** Runs every step until none finds work due at the clock's now. */
    readonly runAll: Effect.Effect<void, DatabaseUnavailable>
    /**
     * The earliest instant after `after` at which some work falls due, or work held by a claim is
     * freed, if any. Work due by `after` that the steps left (held elsewhere, or that no step can
     * take) is not counted: waiting on it would stop the clock where it stands.
     */
    readonly nextAt: (after: Date) => Effect.Effect<Date | undefined, DatabaseUnavailable>
    /** Moves the test clock to `to`, running the work of every instant on the way; one advance at a time. */
    readonly advanceTo: (to: Date) => Effect.Effect<void, DatabaseUnavailable>
  }
>()("sms/DueWork") {
  static readonly layer = Layer.effect(
    DueWork,
    Effect.gen(function* () {
      const steps = yield* WorkSteps
      const deliveries = yield* Deliveries
      const queue = yield* MessageQueueStore
      const clock = yield* ServiceClock
      const simulator = yield* Effect.serviceOption(SimulatorControl)
      const erasure = yield* Erasure
      const compaction = yield* Compaction
      const partitions = yield* JournalPartitions
      const messagePartitions = yield* MessagePartitions
      const assembler = yield* Assembler
      const oneAtATime = yield* Semaphore.make(1)

      const drain = (step: Effect.Effect<number, DatabaseUnavailable>) =>
        Effect.gen(function* () {
          let total = 0
          while (true) {
            const n = yield* step
            if (n === 0) return total
            total += n
          }
        })

      const simulatorSteps = Option.match(simulator, {
        onNone: () => ({ runDue: Effect.succeed(0), nextDue: (_: Date) => Effect.succeed(undefined) }),
        onSome: (s) => ({ runDue: s.runDue, nextDue: s.nextDue })
      })

      const runAll = Effect.gen(function* () {
        for (let pass = 0; pass < passesMax; pass++) {
          const done =
            (yield* steps.recoverAbandoned) +
            (yield* steps.dispatchDue) +
            (yield* drain(simulatorSteps.runDue)) +
            (yield* drain(steps.applyReceipts)) +
            (yield* drain(steps.assembleInbound)) +
            (yield* assembler.forgetJoined) +
            (yield* drain(assembler.eraseExpired)) +
            (yield* drain(steps.verifyDue)) +
            (yield* steps.dropUnmatchedReceipts) +
            (yield* drain(erasure.eraseExpired)) +
            (yield* drain(compaction.compactOnce)) +
            (yield* deliveries.runDue) +
            (yield* drain(messagePartitions.upkeep)) +
            (yield* partitions.upkeep)
          if (done === 0) return
        }
        yield* Effect.logError(`due work still finds work after ${passesMax} passes`)
      })

      const nextAt = (after: Date) =>
        Effect.gen(function* () {
          const candidates = [
            yield* queue.laterClaimable(after),
            yield* queue.nextVerification(after),
            yield* simulatorSteps.nextDue(after),
            yield* deliveries.nextAt(after),
            yield* assembler.nextDue
          ]
          const times = candidates.flatMap((d) =>
            d !== undefined && d > after && Number.isFinite(d.getTime()) ? [d.getTime()] : []
          )
          return times.length === 0 ? undefined : new Date(Math.min(...times))
        })

      // from one instant where work falls due to the next, never past `to`: each step moves the
      // clock forward (nextAt is after now), so work that stays due cannot hold the clock back
      const advanceTo = (to: Date) =>
        Effect.gen(function* () {
          while (true) {
            yield* runAll
            const at = yield* now
            if (at >= to) return
            const next = yield* nextAt(at)
            yield* clock.set(next === undefined || next > to ? to.getTime() : next.getTime())
          }
        }).pipe(oneAtATime.withPermits(1), Effect.uninterruptible)

      return DueWork.of({ runAll, nextAt, advanceTo })
    })
  )
}
