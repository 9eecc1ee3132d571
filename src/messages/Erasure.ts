/**
 * Erasure of messages' personal data (docs/decisions.md#retention; the operator's erasure: docs/operators.md#operator-api-and-cli): recipient, sender and text blanked in
 * the message row, and the answer stored for its idempotency key forgotten (a replay then answers
 * 410 `personal_data_erased`); status, segments, times and every credit stay as they are, its
 * ledger entries folded into their lots' monthly totals (LedgerStore.foldMessageEntries: the
 * counters are unchanged, the per-message detail goes with the message's data). The operator
 * erases one message (Messages.erase); retention erases, in sets, the messages final for longer
 * than their organisation's retention, by the service's clock. Both go through `erase`.
 */
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/Config.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import { LedgerStore } from "../ledger/LedgerStore.ts"
import { now } from "../clock/Time.ts"
import type { MessageRow } from "./MessageRow.ts"
import { type MessageKey, MessageStore } from "./MessageStore.ts"

/**
 * Most messages one retention set erases: one short transaction that locks only finished
 * messages (which no admission waits for) and their keys (which only a replay of them touches).
 */
export const retentionSetMax = 200

export class Erasure extends Context.Service<
  Erasure,
  {
    /**
     * Erases those of `messages` whose processing is finished, in the caller's transaction; returns
     * them as erased (the others are left alone).
     */
    readonly erase: (
      messages: ReadonlyArray<MessageKey>,
      at: Date
    ) => Effect.Effect<ReadonlyArray<MessageRow>, DatabaseUnavailable>
    /**
     * One retention set: erases at most `retentionSetMax` messages past their retention now, in a
     * transaction of its own, skipping those another process is erasing; returns how many.
     */
    readonly eraseExpired: Effect.Effect<number, DatabaseUnavailable>
    /** Messages past their retention not erased yet (the backlog of /metrics). */
    readonly backlog: Effect.Effect<number, DatabaseUnavailable>
  }
>()("sms/Erasure") {
  static readonly layer = Layer.effect(
    Erasure,
    Effect.gen(function* () {
      const { transaction } = yield* Transactions
      const store = yield* MessageStore
      const keys = yield* IdempotencyStore
      const ledger = yield* LedgerStore
      const { retentionDays } = yield* AppConfig

      const erase = (messages: ReadonlyArray<MessageKey>, at: Date) =>
        Effect.gen(function* () {
          const erased = yield* store.erase(messages, at)
          yield* keys.eraseForMessages(erased)
          yield* ledger.foldMessageEntries(erased, at)
          return erased
        })

      const eraseExpired = Effect.gen(function* () {
        const at = yield* now
        return yield* Effect.gen(function* () {
          const expired = yield* store.expired(retentionDays, at, retentionSetMax)
          return (yield* erase(expired, at)).length
        }).pipe(transaction)
      }).pipe(Effect.withSpan("Erasure.eraseExpired"))

      return Erasure.of({
        erase,
        eraseExpired,
        backlog: Effect.flatMap(now, (at) => store.expiredCount(retentionDays, at))
      })
    })
  )
}
