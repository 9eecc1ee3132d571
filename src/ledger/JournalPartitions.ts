/**
 * Upkeep of the ledger journal's monthly partitions (`credit_entries`, LedgerStore): the
 * partitions of this month and the next `monthsAhead` made before anything is written there, and
 * the past ones that retention has emptied dropped. Run when the layer is built (before the
 * service answers), by the retention loop of any process, and by every step of the test clock.
 * Any number of processes may run it at once: a partition is created under an advisory lock, and
 * a drop looks again under the journal's lock; both wait at most `partitionLockMs` for their locks.
 */
import { Context, Effect, Layer } from "effect"
import { now } from "../clock/Time.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { makeMonthlyPreparation, monthsAhead } from "../db/MonthPartitions.ts"
import { LedgerStore } from "./LedgerStore.ts"

export class JournalPartitions extends Context.Service<
  JournalPartitions,
  {
    /**
     * Makes the partitions ahead (once per month and process: they exist from then on) and drops
     * the past partitions retention has emptied; returns how many were dropped.
     */
    readonly upkeep: Effect.Effect<number, DatabaseUnavailable>
  }
>()("sms/JournalPartitions") {
  static readonly layer = Layer.effect(
    JournalPartitions,
    Effect.gen(function* () {
      const store = yield* LedgerStore
      // Stryker disable next-line StringLiteral: the name in a log line, not behaviour
      const prepare = yield* makeMonthlyPreparation("ledger journal", (at) => store.preparePartitions(at, monthsAhead))

      yield* Effect.flatMap(now, prepare)
      return JournalPartitions.of({
        upkeep: Effect.gen(function* () {
          yield* prepare(yield* now)
          const dropped = yield* store.dropEmptyPartitions(yield* now)
          // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: a log line, not behaviour
          if (dropped.length > 0)
            yield* Effect.logInfo(`ledger journal: the emptied partitions of ${dropped.join(", ")} dropped`)
          return dropped.length
        }).pipe(Effect.withSpan("JournalPartitions.upkeep"))
      })
    })
  )
}
