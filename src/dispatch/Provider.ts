/**
 * The port to an SMS provider. The service only ever reaches a provider through this service,
 * so the simulator (simulator/) and a real adapter (SMPP, HTTP) are interchangeable layers.
 */
import { Context, type Effect, type Stream } from "effect"

export interface Submission {
  readonly organisationId: string
  readonly messageId: string
  readonly to: string
  readonly senderName: string
  readonly text: string
  readonly segments: number
}

/** The provider's answer to a submission. */
export type SubmitResult =
  /** The provider took the message. */
  | { readonly _tag: "Accepted"; readonly providerMessageId: string }
  /** The provider explicitly refused it: it will never be sent. */
  | { readonly _tag: "Rejected"; readonly reason: string }
  /** No answer or a lost answer: the message may or may not have been taken. */
  | { readonly _tag: "Unknown" }
  /** The provider could not be reached: nothing was handed over. */
  | { readonly _tag: "Unreachable" }

/** What the provider says about a message whose submission result was unknown. */
export type ProviderStatus = "accepted" | "not_received" | "unknown"

/** A delivery receipt: the final outcome of an accepted message. */
export interface Receipt {
  readonly organisationId: string
  readonly messageId: string
  readonly outcome: "delivered" | "undeliverable"
  readonly at: Date
}

export class Provider extends Context.Service<Provider, {
  /** Hands one message to the provider; never fails, every outcome is a SubmitResult. */
  readonly submit: (submission: Submission) => Effect.Effect<SubmitResult>
  /** Asks whether the provider received a message (verification of unknown results); never resubmits. */
  readonly status: (submission: Submission) => Effect.Effect<ProviderStatus>
  /** Delivery receipts as they arrive; may repeat or arrive out of order. */
  readonly receipts: Stream.Stream<Receipt>
}>()("sms/Provider") {}
