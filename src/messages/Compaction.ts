/**
 * What a finished message no longer needs (issue 23): the in-process simulator's memory of it,
 * removed once no verification can ask about it any more (a message may stay `unknown` for
 * `verifySchedule.stopAfterMs`, 30 days, while its receipt was long sent, and the simulator must
 * still say it took it), and the timeline rows of a database upgraded from before timelines were
 * kept in the message row, collapsed into its row a day after it became final (or was erased;
 * MessageStore.collapseTimelines): the same entries read back, 36 bytes instead of about 800 for
 * four. The public answers never read the simulator's rows. Sets of `compactionSetMax`, SKIP LOCKED.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { verifySchedule } from "./VerificationQueue.ts"
import { MessageStore } from "./MessageStore.ts"
import { SimulatorControl } from "../provider/SimulatorControl.ts"
import { now } from "../clock/Time.ts"

/** How long a finished message's timeline rows (an upgraded database's) are kept. */
export const compactAfterMs = 86_400_000
/** How long the simulator remembers a message after its receipt: longer than any verification asks. */
export const simulatorMemoryMs = verifySchedule.stopAfterMs + compactAfterMs
/** Most rows of one table (messages, for timelines) one compaction set removes. */
export const compactionSetMax = 1_000

export class Compaction extends Context.Service<
  Compaction,
  {
    /** One set: removes at most `compactionSetMax` simulator rows, collapses as many timelines; returns how many in all. */
    readonly compactOnce: Effect.Effect<number, DatabaseUnavailable>
  }
>()("sms/Compaction") {
  static readonly layer = Layer.effect(
    Compaction,
    Effect.gen(function* () {
      const messages = yield* MessageStore
      const simulator = yield* Effect.serviceOption(SimulatorControl)
      const compactOnce = Effect.gen(function* () {
        const at = (yield* now).getTime()
        const fromSimulator = Option.isSome(simulator)
          ? yield* simulator.value.compact(new Date(at - simulatorMemoryMs), compactionSetMax)
          : 0
        const timelines = (yield* messages.collapseTimelines(new Date(at - compactAfterMs), compactionSetMax)).length
        return fromSimulator + timelines
      }).pipe(Effect.withSpan("Compaction.compactOnce"))
      return Compaction.of({ compactOnce })
    })
  )
}
