/**
 * What a finished message no longer needs (issue 23): its applied delivery receipts, removed a
 * day after they were applied (the outcome is in the message, and a repeat finds it final and is
 * ignored), and the in-process simulator's memory of a message, removed once no verification can
 * ask about it any more: a message may stay `unknown` for `verifySchedule.stopAfterMs` (30 days)
 * while its receipt was long sent, and the simulator must still say it took it. The day leaves
 * the rows to an operator looking into a recent message. The public answers (a message, its
 * timeline) never read them. And its timeline, a day after it became final (or was erased),
 * collapsed from its `message_events` rows into its own row (MessageStore.collapseTimelines): the
 * same entries read back, 36 bytes instead of about 800 for four; in the same transaction its
 * settled credit holds are removed (LedgerStore.dropSettledHolds), which its ledger entries
 * still explain. Sets of `compactionSetMax`, SKIP LOCKED.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import { LedgerStore } from "../ledger/LedgerStore.ts"
import { verifySchedule } from "../messages/MessageQueueStore.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { SimulatorControl } from "../provider/SimulatorControl.ts"
import { now } from "../clock/Time.ts"
import { ReceiptStore } from "./ReceiptStore.ts"

/** How long applied receipts, and a finished message's timeline rows, are kept. */
export const compactAfterMs = 86_400_000
/** How long the simulator remembers a message after its receipt: longer than any verification asks. */
export const simulatorMemoryMs = verifySchedule.stopAfterMs + compactAfterMs
/** Most rows of one table (messages, for timelines) one compaction set removes. */
export const compactionSetMax = 1_000

export class Compaction extends Context.Service<Compaction, {
  /** One set: removes at most `compactionSetMax` rows of each table, collapses as many timelines; returns how many in all. */
  readonly compactOnce: Effect.Effect<number, DatabaseUnavailable>
}>()("sms/Compaction") {
  static readonly layer = Layer.effect(Compaction, Effect.gen(function*() {
    const receipts = yield* ReceiptStore
    const messages = yield* MessageStore
    const ledger = yield* LedgerStore
    const transactions = yield* Transactions
    const simulator = yield* Effect.serviceOption(SimulatorControl)
    const compactOnce = Effect.gen(function*() {
      const at = (yield* now).getTime()
      const fromReceipts = yield* receipts.dropApplied(new Date(at - compactAfterMs), compactionSetMax)
      const fromSimulator = Option.isSome(simulator) ? yield* simulator.value.compact(new Date(at - simulatorMemoryMs), compactionSetMax) : 0
      const timelines = yield* transactions.transaction(Effect.gen(function*() {
        const collapsed = yield* messages.collapseTimelines(new Date(at - compactAfterMs), compactionSetMax)
        yield* ledger.dropSettledHolds(collapsed)
        return collapsed.length
      }))
      return fromReceipts + fromSimulator + timelines
    }).pipe(Effect.withSpan("Compaction.compactOnce"))
    return Compaction.of({ compactOnce })
  }))
}
