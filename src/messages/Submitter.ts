/**
 * Handing one message to the provider and settling its answer: the last steps of an immediate
 * send and of a dispatched scheduled message. The provider's own deadline bounds the call; a
 * guard a little longer turns a provider that never answers into `unknown`, never a resend.
 */
import { Context, Effect, Layer } from "effect"
import { makeDeadlines } from "../clock/Deadlines.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { Provider, type Submission, type SubmitResult } from "../provider/Provider.ts"
import type { MessageRow } from "./MessageRow.ts"
import { type Outcome, Settlement } from "./Settlement.ts"

/** How much longer than the provider's own deadline the guard waits. */
export const submitGuardMarginMs = 5_000

/** What the provider is handed for a stored message. */
export const submissionOf = (m: MessageRow): Submission => ({
  organisationId: m.organisationId,
  messageId: m.id,
  to: m.toNumber,
  senderName: m.senderName,
  text: m.text,
  segments: m.segments,
  immediate: m.sendAt === null
})

/** The settlement outcome of a provider's answer. */
export const outcomeOf = (result: SubmitResult): Outcome => {
  switch (result._tag) {
    case "Accepted":
      return { _tag: "Accepted", providerRef: result.providerRef }
    case "Rejected":
      return { _tag: "Rejected" }
    case "Unreachable":
      return { _tag: "NeverSent" }
    case "Unknown":
      return { _tag: "Unknown" }
  }
}

export class Submitter extends Context.Service<
  Submitter,
  {
    /** Submits a message already marked as handed over, and settles it on the provider's answer. */
    readonly submitAndSettle: (message: MessageRow) => Effect.Effect<void, DatabaseUnavailable>
    /** `submitAndSettle` for an immediate send: returns the answer its caller gets. */
    readonly submitAndAnswer: (message: MessageRow) => Effect.Effect<Answer, DatabaseUnavailable>
  }
>()("sms/Submitter") {
  static readonly layer = Layer.effect(
    Submitter,
    Effect.gen(function* () {
      const provider = yield* Provider
      const settlement = yield* Settlement
      // one sweeper bounds every submission (clock/Deadlines.ts), not a timer and a race each
      const guard = yield* makeDeadlines(provider.submitDeadlineMs + submitGuardMarginMs)
      const noAnswer: SubmitResult = { _tag: "Unknown", reason: "no answer from the provider in time" }
      /** The provider's answer, or Unknown when it gave none within its deadline and the guard. */
      const submit = (message: MessageRow) => guard.bounded(provider.submit(submissionOf(message)), () => noAnswer)
      return Submitter.of({
        // untraced: the dispatcher runs it for every message (a span and two stack captures each),
        // its statements are traced per set
        submitAndSettle: Effect.fnUntraced(function* (message: MessageRow) {
          yield* settlement.settle(message, outcomeOf(yield* submit(message)), "provider")
        }),
        submitAndAnswer: Effect.fn("Submitter.submitAndAnswer")(function* (message: MessageRow) {
          return yield* settlement.settleAnswer(message, outcomeOf(yield* submit(message)), "provider")
        })
      })
    })
  )
}
