/**
 * What a finished message no longer needs, removed a day after it finished (issue 23): its
 * applied delivery receipts (the outcome is in the message, and a repeat finds it final and is
 * ignored) and the in-process simulator's memory of it (only an unfinished message is ever asked
 * about). The day leaves the rows to an operator looking into a recent message. The public
 * answers (a message, its timeline) never read them. Sets of `compactionSetMax`, SKIP LOCKED.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { SimulatorControl } from "../provider/SimulatorControl.ts"
import { now } from "../clock/Time.ts"
import { ReceiptStore } from "./ReceiptStore.ts"

/** How long after a message finished its receipts and simulator row are kept. */
export const compactAfterMs = 86_400_000
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
      const before = new Date((yield* now).getTime() - compactAfterMs)
      const fromReceipts = yield* receipts.dropApplied(before, compactionSetMax)
      const fromSimulator = Option.isSome(simulator) ? yield* simulator.value.compact(before, compactionSetMax) : 0
      return fromReceipts + fromSimulator
    }).pipe(Effect.withSpan("Compaction.compactOnce"))
    return Compaction.of({ compactOnce })
  }))
}
