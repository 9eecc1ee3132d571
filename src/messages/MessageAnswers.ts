/**
 * What the creation of a message answers over HTTP, and so what its Idempotency-Key stores and
 * replays: encoded by the HTTP edge through the API's declared schemas (http/CreationAnswers.ts).
 * Services only say what happened to the message; this port turns it into the stored answer, so
 * the answer can be stored in the same transaction as the status it reports.
 */
import { Context } from "effect"
import type { Answer } from "../idempotency/Answer.ts"
import type { MessageRow } from "./MessageRow.ts"

/** What happened to a message its creation reports: scheduled, or one of the settlement's outcomes. */
export type MessageOutcome =
  | "Scheduled"
  | "Accepted"
  | "Rejected"
  | "NeverSent"
  | "Unknown"
  | "NotReceived"
  | "SenderUnavailable"
  | "SmsUnavailable"
  | "OptedOut"

export class MessageAnswers extends Context.Service<
  MessageAnswers,
  {
    /** The answer of a creation whose message (as it now is) met `outcome`. */
    readonly answer: (outcome: MessageOutcome, message: MessageRow) => Answer
  }
>()("sms/MessageAnswers") {}
