/**
 * Settles a message on an outcome, in one transaction: its status transition and timeline
 * entry, the ledger movement of contract section 3 (accepted consumes; failed and blocked
 * release; unknown keeps the reservation), and the answer stored for an in-progress
 * idempotency key. Immediate sends, the dispatcher, the verifier and recovery all settle here.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { AppConfig } from "../Config.ts"
import type { MessageStatus } from "../domain/MessageStatus.ts"
import { errorBody } from "../domain/Errors.ts"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { type Answer, messageBody, messageLocation, type MessageRow } from "./MessageBody.ts"
import { type EventSource, MessageStore } from "./MessageStore.ts"

export type Outcome =
  /** The provider took the message (its answer, or verification). */
  | { readonly _tag: "Accepted"; readonly providerMessageId: string }
  /** The provider refused it. */
  | { readonly _tag: "Rejected" }
  /** Nothing was handed to the provider (unreachable, or a crash before the call). */
  | { readonly _tag: "NeverSent" }
  /** The provider's answer is unknown (no answer, lost answer, or a crash during the call). */
  | { readonly _tag: "Unknown" }
  /** Verification: the provider never received it. */
  | { readonly _tag: "NotReceived" }
  /** At due time the sender was not registered and active. */
  | { readonly _tag: "SenderUnavailable" }
  /** At due time the organisation had SMS disabled. */
  | { readonly _tag: "SmsUnavailable" }

interface Plan {
  readonly from: ReadonlyArray<MessageStatus>
  readonly to: MessageStatus
  readonly credits: "consume" | "release" | "keep"
  readonly answer: (m: MessageRow) => Answer
}

const failure = (status: number, code: string, message: string) => (m: MessageRow): Answer => ({
  status,
  body: errorBody(code, message, { messageId: m.id }),
  location: null
})

const plans: { readonly [K in Outcome["_tag"]]: Plan } = {
  Accepted: {
    from: ["processing", "unknown"],
    to: "accepted",
    credits: "consume",
    answer: (m) => ({ status: 201, body: messageBody({ ...m, status: "accepted" }), location: messageLocation(m.id) })
  },
  Rejected: {
    from: ["processing"],
    to: "failed",
    credits: "release",
    answer: failure(502, "provider_rejected", "The provider rejected the message; it will not be sent")
  },
  NeverSent: {
    from: ["processing"],
    to: "failed",
    credits: "release",
    answer: failure(503, "dispatch_unavailable", "The message could not be handed to the provider; it was not sent")
  },
  Unknown: {
    from: ["processing"],
    to: "unknown",
    credits: "keep",
    answer: failure(502, "provider_result_unknown", "The provider's answer is unknown; read the message, never resend it with a new key")
  },
  NotReceived: {
    from: ["unknown"],
    to: "failed",
    credits: "release",
    answer: failure(502, "provider_result_unknown", "The provider's answer is unknown; read the message, never resend it with a new key")
  },
  SenderUnavailable: {
    from: ["scheduled", "processing"],
    to: "blocked",
    credits: "release",
    answer: failure(403, "sender_name_unavailable", "The sender name was not available when the message was due; it was not sent")
  },
  SmsUnavailable: {
    from: ["scheduled", "processing"],
    to: "failed",
    credits: "release",
    answer: failure(403, "sms_unavailable", "SMS was not available for the organisation when the message was due; it was not sent")
  }
}

export class Settlement extends Context.Service<Settlement, {
  /** Applies `outcome` to the message atomically; returns the answer an immediate send gives for it. */
  readonly settle: (message: MessageRow, outcome: Outcome, source: EventSource, at: Date) => Effect.Effect<Answer, SqlError.SqlError>
}>()("sms/Settlement") {
  static readonly layer = Layer.effect(Settlement, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* MessageStore
    const ledger = yield* Ledger
    const idempotency = yield* Idempotency
    const config = yield* AppConfig

    return Settlement.of({
      settle: Effect.fn("Settlement.settle")(function*(message: MessageRow, outcome: Outcome, source: EventSource, at: Date) {
        const plan = plans[outcome._tag]
        const answer = plan.answer(message)
        yield* Effect.gen(function*() {
          const moved = yield* store.transition(message.organisationId, message.id, plan.from, plan.to, source, at, {
            ...(outcome._tag === "Accepted" ? { providerMessageId: outcome.providerMessageId } : {}),
            ...(plan.to === "unknown" ? { verifyAt: new Date(at.getTime() + config.verifyIntervalMs) } : {})
          })
          if (moved === undefined) return
          if (plan.credits === "consume") yield* ledger.consume(message.organisationId, message.id)
          if (plan.credits === "release") yield* ledger.release(message.organisationId, message.id)
          // only an immediate send can still hold its key in progress: a scheduled one stored its 202
          if (message.sendAt === null) yield* idempotency.storeForMessage(message.organisationId, message.id, answer, at)
        }).pipe(sql.withTransaction)
        return answer
      })
    })
  }))
}
