/**
 * Upkeep of the ledger journal's monthly partitions (`credit_entries`, LedgerStore): the
 * partitions of this month and the next `monthsAhead` made before anything is written there, and
 * the past ones that retention has emptied dropped. Run when the layer is built (before the
 * service answers), by the retention loop of any process, and by every step of the test clock.
 * Any number of processes may run it at once: a partition is created under an advisory lock, and
 * a drop looks again under the journal's lock.
 */
import { Context, Effect, Layer, Ref } from "effect"
import { now } from "../clock/Time.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { LedgerStore } from "./LedgerStore.ts"

/** How many months after this one have their partition made ahead. */
export const monthsAhead = 2

/** A UTC month, as a key. */
// Stryker disable next-line ArithmeticOperator: equivalent, the key is only compared with itself, and `year * 12 - month` or `year / 12 + month` tell months apart as well
const monthKey = (at: Date) => at.getUTCFullYear() * 12 + at.getUTCMonth()

export class JournalPartitions extends Context.Service<JournalPartitions, {
  /**
   * Makes the partitions ahead (once per month and process: they exist from then on) and drops
   * the past partitions retention has emptied; returns how many were dropped.
   */
  readonly upkeep: Effect.Effect<number, DatabaseUnavailable>
}>()("sms/JournalPartitions") {
  static readonly layer = Layer.effect(JournalPartitions, Effect.gen(function*() {
    const store = yield* LedgerStore
    /** The month whose partitions ahead this process has made. */
    const preparedFor = yield* Ref.make<number | undefined>(undefined)

    const prepare = Effect.gen(function*() {
      const at = yield* now
      // Stryker disable next-line ConditionalExpression: equivalent, making partitions that exist does nothing (the statement is saved)
      if ((yield* Ref.get(preparedFor)) === monthKey(at)) return
      yield* store.preparePartitions(at, monthsAhead)
      yield* Ref.set(preparedFor, monthKey(at))
    })

    yield* prepare
    return JournalPartitions.of({
      upkeep: Effect.gen(function*() {
        yield* prepare
        const dropped = yield* store.dropEmptyPartitions(yield* now)
        // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: a log line, not behaviour
        if (dropped.length > 0) yield* Effect.logInfo(`ledger journal: the emptied partitions of ${dropped.join(", ")} dropped`)
        return dropped.length
      }).pipe(Effect.withSpan("JournalPartitions.upkeep"))
    })
  }))
}
