/**
 * What a finished message no longer needs (issue 23): its applied delivery receipts, removed a
 * day after they were applied (the outcome is in the message, and a repeat finds it final and is
 * ignored), and the in-process simulator's memory of a message, removed once no verification can
 * ask about it any more: a message may stay `unknown` for `verifySchedule.stopAfterMs` (30 days)
 * while its receipt was long sent, and the simulator must still say it took it. The day leaves
 * the rows to an operator looking into a recent message. The public answers (a message, its
 * timeline) never read them. Sets of `compactionSetMax`, SKIP LOCKED.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { verifySchedule } from "../messages/MessageQueueStore.ts"
import { SimulatorControl } from "../provider/SimulatorControl.ts"
import { now } from "../clock/Time.ts"
import { ReceiptStore } from "./ReceiptStore.ts"

/** How long applied receipts are kept. */
export const compactAfterMs = 86_400_000
/** How long the simulator remembers a message after its receipt: longer than any verification asks. */
export const simulatorMemoryMs = verifySchedule.stopAfterMs + compactAfterMs
/** Most rows of one table one compaction set removes. */
export const compactionSetMax = 1_000

export class Compaction extends Context.Service<Compaction, {
  /** One set: removes at most `compactionSetMax` rows of each table; returns how many in all. */
  readonly compactOnce: Effect.Effect<number, DatabaseUnavailable>
}>()("sms/Compaction") {
  static readonly layer = Layer.effect(Compaction, Effect.gen(function*() {
    const receipts = yield* ReceiptStore
    const simulator = yield* Effect.serviceOption(SimulatorControl)
    const compactOnce = Effect.gen(function*() {
      const at = (yield* now).getTime()
      const fromReceipts = yield* receipts.dropApplied(new Date(at - compactAfterMs), compactionSetMax)
      const fromSimulator = Option.isSome(simulator) ? yield* simulator.value.compact(new Date(at - simulatorMemoryMs), compactionSetMax) : 0
      return fromReceipts + fromSimulator
    }).pipe(Effect.withSpan("Compaction.compactOnce"))
    return Compaction.of({ compactOnce })
  }))
}
