/**
 * Recovery of messages whose work ended without settling them (docs/decisions.md#idempotency): a message
 * left `processing` by a process whose lease ran out (it died), or by this process's own work
 * that ended without an outcome (a commit whose answer was lost, say), is settled as `failed`
 * when it provably never reached the provider (not yet marked as handed over), else as `unknown`
 * for the verifier, never sent again. An immediate send's idempotency key then holds the
 * matching answer.
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { now } from "../clock/Time.ts"
import { ProcessLease } from "../processes/ProcessLease.ts"
import { ProcessStore } from "../processes/ProcessStore.ts"
import type { AbandonedMessage } from "./AbandonedMessages.ts"
import { MessageQueueStore } from "./MessageQueueStore.ts"
import { Settlement } from "./Settlement.ts"

/** Most messages one recovery round settles. */
export const recoveryRoundMax = 100

/** How long after its lease ran out a process that owns no message any more is forgotten. */
const deadWorkerKeptMs = 3_600_000

export class Recovery extends Context.Service<
  Recovery,
  {
    /** Settles up to `recoveryRoundMax` abandoned messages (see above); returns how many. */
    readonly recoverAbandoned: Effect.Effect<number, DatabaseUnavailable>
    /** Settles this one message if it is abandoned; true when it did. */
    readonly recoverMessage: (organisationId: string, messageId: string) => Effect.Effect<boolean, DatabaseUnavailable>
    /** Forgets processes whose lease ran out long ago and that own no message any more. */
    readonly forgetDeadWorkers: Effect.Effect<void, DatabaseUnavailable>
  }
>()("sms/Recovery") {
  static readonly layer = Layer.effect(
    Recovery,
    Effect.gen(function* () {
      const queue = yield* MessageQueueStore
      const workers = yield* ProcessStore
      const settlement = yield* Settlement
      const lease = yield* ProcessLease

      /**
       * A dead process's messages, and this process's own that it is not working on. What this
       * process works on is read again after the query: work that began meanwhile made its row
       * `processing` only after it was counted as work, so a row the query saw and no longer worked
       * on has been left for good. A claim that starts messages counts them only once it has them:
       * while one runs, this process's own rows wait for the next round.
       */
      const abandoned = (only?: { readonly organisationId: string; readonly messageId: string }) =>
        Effect.gen(function* () {
          const [rows, raced] = yield* lease.duringStarts(
            Effect.flatMap(now, (at) => queue.abandoned(at, lease.workerId, lease.workingOn(), recoveryRoundMax, only))
          )
          return rows.filter((m) => !(m.own && (raced || lease.isWorkingOn(m.id))))
        })

      const settleAll = (messages: ReadonlyArray<AbandonedMessage>) =>
        Effect.forEach(
          messages,
          (m) => settlement.settle(m, m.maybeSent ? { _tag: "Unknown" } : { _tag: "NeverSent" }, "recovery"),
          {
            concurrency: "unbounded",
            discard: true
          }
        )

      return Recovery.of({
        recoverAbandoned: Effect.gen(function* () {
          const found = yield* abandoned()
          yield* settleAll(found)
          if (found.length > 0) {
            yield* Effect.logWarning("recovered messages left processing").pipe(
              Effect.annotateLogs({
                count: found.length,
                ofThisProcess: found.filter((m) => m.own).length
              })
            )
          }
          return found.length
        }).pipe(Effect.withSpan("Recovery.recoverAbandoned")),
        recoverMessage: Effect.fn("Recovery.recoverMessage")(function* (organisationId: string, messageId: string) {
          const found = yield* abandoned({ organisationId, messageId })
          yield* settleAll(found)
          return found.length > 0
        }),
        forgetDeadWorkers: Effect.gen(function* () {
          const at = yield* now
          yield* workers.forgetDead(new Date(at.getTime() - deadWorkerKeptMs), queue.ownsMessagesInFlight)
        })
      })
    })
  )
}
