/**
 * The end of an immediate send handed to the processes that hold its route's binds (contract
 * section 11, Messages.ts): its message was stored `scheduled` and due now, a holder's
 * dispatcher claims, submits and settles it, and the settlement stores its key's answer. This
 * process answers the client with that answer once it is stored (docs/integrators.md#messages: once the provider
 * has answered), reading the key by its primary key on a backoff.
 *
 * When no holder has started the message after `takeBackAfterMs` (no process holds the bind:
 * the SMSC refuses every bind, say), this process takes it back with the one exclusive step of
 * a dispatch (`scheduled` to `processing`), so that no holder sends it later, and settles it as
 * never sent: 503 `dispatch_unavailable`, credits released.
 */
import { Context, Effect, Layer } from "effect"
import { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import { Provider } from "../provider/Provider.ts"
import { now } from "../clock/Time.ts"
import { ProcessLease } from "../processes/ProcessLease.ts"
import { MessageQueueStore } from "./MessageQueueStore.ts"
import type { MessageRow } from "./MessageRow.ts"
import { Settlement } from "./Settlement.ts"
import { submitGuardMarginMs } from "./Submitter.ts"

/** How long a handed-over message may wait for a holder to start it: a dead holder is replaced within 15 s. */
export const takeBackAfterMs = 15_000
/** Once a holder started it: its provider's deadline and guard, then recovery of a holder that died meanwhile (lease and round). */
const recoveryWaitMs = 12_000
/** First and longest pause between two reads of the key. */
const pollFirstMs = 10
const pollMaxMs = 200

export class BindHolderRelay extends Context.Service<
  BindHolderRelay,
  {
    /**
     * The answer of the handed-over immediate send `message`, created under `key`: once a holder
     * settled it, or, when none started it in time, the never-sent answer after taking it back.
     * Waits in real time (sleeps), so that it ends under the test clock too.
     */
    readonly awaitAnswer: (message: MessageRow, key: string) => Effect.Effect<Answer, DatabaseUnavailable>
  }
>()("sms/BindHolderRelay") {
  static readonly layer = Layer.effect(
    BindHolderRelay,
    Effect.gen(function* () {
      const keys = yield* IdempotencyStore
      const queue = yield* MessageQueueStore
      const settlement = yield* Settlement
      const provider = yield* Provider
      const { workerId } = yield* ProcessLease
      const answerWaitMs = takeBackAfterMs + provider.submitDeadlineMs + submitGuardMarginMs + recoveryWaitMs

      /** Starts the message here if no holder did; its answer, or undefined when a holder has it. */
      const takeBack = (message: MessageRow) =>
        Effect.gen(function* () {
          const [refusal] = yield* queue.start([message], yield* now, workerId)
          if (refusal === "gone") return undefined
          yield* Effect.logWarning("immediate send taken back: no process holding its route's bind started it").pipe(
            Effect.annotateLogs({ waitedMs: takeBackAfterMs })
          )
          if (refusal === "sms_unavailable")
            return yield* settlement.settleAnswer(message, { _tag: "SmsUnavailable" }, "dispatch")
          if (refusal === "opted_out") return yield* settlement.settleAnswer(message, { _tag: "OptedOut" }, "opted_out")
          if (refusal === "sender_unavailable")
            return yield* settlement.settleAnswer(message, { _tag: "SenderUnavailable" }, "dispatch")
          return yield* settlement.settleAnswer({ ...message, status: "processing" }, { _tag: "NeverSent" }, "dispatch")
        })

      return BindHolderRelay.of({
        awaitAnswer: Effect.fn("BindHolderRelay.awaitAnswer")(function* (message: MessageRow, key: string) {
          let waitedMs = 0
          let pauseMs = pollFirstMs
          let tookBack = false
          while (true) {
            const answer = yield* keys.answerOfKey(message.organisationId, "messages", key)
            if (answer !== undefined) return answer
            if (!tookBack && waitedMs >= takeBackAfterMs) {
              tookBack = true
              const taken = yield* takeBack(message)
              if (taken !== undefined) return taken
            }
            if (waitedMs >= answerWaitMs) {
              return yield* Effect.fail(
                new DatabaseUnavailable("the process holding the route's bind did not settle the message in time")
              )
            }
            yield* Effect.sleep(pauseMs)
            waitedMs += pauseMs
            pauseMs = Math.min(pauseMs * 2, pollMaxMs)
          }
        })
      })
    })
  )
}
