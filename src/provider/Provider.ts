/**
 * The port to SMS providers, in both directions. The service reaches a provider only through
 * `Provider` (submit, query); a provider reaches the service only through `ProviderInbox`
 * (delivery receipts, late answers), which stores what it is told before the adapter
 * acknowledges it. The in-process simulator (simulator/), the SMPP adapter (provider/smpp/) and
 * any later adapter are layers of `Provider` that may use the inbox; `ProviderLayer.ts` picks
 * one from SMS_PROVIDER.
 */
import { Context, Data, type Effect } from "effect"
import type { PartPosition } from "../domain/InboundParts.ts"

/** One message handed to a provider. */
export interface Submission {
  readonly organisationId: string
  readonly messageId: string
  /** E.164, `+2613…`. */
  readonly to: string
  readonly senderName: string
  readonly text: string
  /** As docs/decisions.md#segments counts them (1 or 2); an adapter splits the text exactly there. */
  readonly segments: number
  /**
   * An immediate send, whose caller waits for the answer: it goes ahead of dispatched scheduled
   * messages wherever submissions queue (docs/decisions.md#fair-share-and-fleet-limits). Absent: a scheduled message.
   */
  readonly immediate?: boolean
  /**
   * The entry to send it through instead of the one serving its number: the fallback of a route
   * that provably never took it (docs/operators.md#fallback-routes). Absent: the number's route.
   */
  readonly route?: string
}

/**
 * A provider's own id of a message, namespaced by the route (SMSC) that took it:
 * `<route>:<id>`, the id normalised the same way in answers and receipts (SMPP `msg_id_type`),
 * so a receipt finds its message by equality.
 */
export type ProviderRef = string

/** The provider's answer to a submission. */
export type SubmitResult =
  /** The provider took the message. */
  | { readonly _tag: "Accepted"; readonly providerRef: ProviderRef }
  /** The provider explicitly refused it: it will never be sent. */
  | { readonly _tag: "Rejected"; readonly reason: string }
  /** No answer in time, or a connection lost after the write: it may or may not have been taken. */
  | { readonly _tag: "Unknown"; readonly reason: string }
  /** Nothing was handed over (no connection, bind refused, throttled until the deadline, no route). */
  | { readonly _tag: "Unreachable"; readonly reason: string }

/** A message whose submission result is unknown, as the verifier asks about it. */
export interface Query extends Submission {
  /** Known when the provider's id reached us (a late answer); usually null. */
  readonly providerRef: ProviderRef | null
}

/** What the provider knows of a message whose submission result was unknown. Never a resend. */
export type QueryResult =
  /** It was taken, under this id. */
  | { readonly _tag: "Accepted"; readonly providerRef: ProviderRef }
  /** It provably never was. */
  | { readonly _tag: "NotReceived"; readonly reason: string }
  /** No evidence either way: ask again later. */
  | { readonly _tag: "Unknown" }

/** The state of one route (an SMSC bind, or the simulator), for /ready and the logs. */
export interface RouteHealth {
  readonly route: string
  readonly connected: boolean
  /** One line an operator can act on: `bound to host:port`, `bind refused: 0x0e`, `reconnecting in 4 s`. */
  readonly detail: string
  /**
   * The fleet's bind slots of the route (SMPP `binds`): the one this process holds (from 0), or
   * null when other processes hold them all and this one leaves the route's messages to them.
   */
  readonly slot?: { readonly held: number | null; readonly of: number }
}

/**
 * Which numbers this process can hand to the provider now (docs/decisions.md#fair-share-and-fleet-limits): every one, or,
 * when it holds the fleet's binds of only some routes, per number prefix (longest first, `""` for
 * `*`) whether it holds a bind of the route serving it. A number no prefix serves fails at
 * once whoever submits it, so any process may take it.
 */
export type Sendable =
  | { readonly _tag: "All" }
  | { readonly _tag: "ByPrefix"; readonly prefixes: ReadonlyArray<{ readonly prefix: string; readonly held: boolean }> }

/** Whether `sendable` lets this process submit to `to`. */
export const canSend = (sendable: Sendable, to: string): boolean =>
  sendable._tag === "All" || (sendable.prefixes.find((p) => to.startsWith(p.prefix))?.held ?? true)

/** Whether `sendable` lets this process submit no number at all (it holds no bind, and `*` is some route's). */
export const sendsNothing = (sendable: Sendable): boolean =>
  sendable._tag === "ByPrefix" &&
  sendable.prefixes.every((p) => !p.held) &&
  sendable.prefixes.some((p) => p.prefix === "")

export class Provider extends Context.Service<
  Provider,
  {
    /** Hands one message to the provider; never fails: every outcome is a SubmitResult. Safe to call concurrently. */
    readonly submit: (submission: Submission) => Effect.Effect<SubmitResult>
    /** Asks what the provider knows of a message whose result was unknown; never resubmits it. */
    readonly query: (query: Query) => Effect.Effect<QueryResult>
    /** The state of every route this provider serves. */
    readonly health: Effect.Effect<ReadonlyArray<RouteHealth>>
    /** The route that serves a number (the prefix of the provider refs it gives), if any. */
    readonly routeOf: (to: string) => string | undefined
    /** Which numbers this process can submit now: a route whose binds other processes hold is theirs. */
    readonly sendable: () => Sendable
    /**
     * Waits for the turn of a dispatched message to `to` in its route's rate, evenly spaced
     * (SMPP `mps`), before the dispatcher marks it as handed over: a message waiting for the rate
     * is still only claimed, so a crash leaves it to be sent by another process rather than
     * `unknown`. Immediate sends do not wait here (their submission does).
     */
    readonly pace: (to: string) => Effect.Effect<void>
    /**
     * Whether `pace` may wait (a route has a rate). When it never does, the dispatcher's claim
     * starts the messages it takes in the same statement: nothing waits between the two.
     */
    readonly paced: boolean
    /** Longest `submit` may take before it answers (its own response deadline): the caller's guard waits a little longer. */
    readonly submitDeadlineMs: number
    /**
     * The most submissions a second it hands over in all (the sum of what its routes allow
     * themselves: this process's share of each cap, less the margin), or undefined
     * when a route has no cap: the dispatcher keeps no more messages in hand than it can hand over
     * in a moment, so a message of another organisation falling due is not queued behind them.
     */
    readonly ratePerSecond: number | undefined
  }
>()("sms/Provider") {}

/**
 * A final delivery receipt as a provider reports it. Non-final states (ENROUTE, ACCEPTD) are not
 * receipts. An SMSC may give the same id again (after a restart), so a receipt also says which
 * number it is about: it goes to the newest accepted message with that id and number.
 */
export interface IncomingReceipt {
  readonly providerRef: ProviderRef
  readonly outcome: "delivered" | "undeliverable"
  /** When the provider says it happened (its done date, unless coarser than the arrival), else when the receipt arrived. */
  readonly occurredAt: Date
  /** The number it is about (E.164), when the provider says; null when it does not. */
  readonly recipient: string | null
  /** When the provider says the message was submitted, to the minute, if it says. */
  readonly submittedAt: Date | null
}

/** An answer to a submission that arrived after the adapter had reported it Unknown: verification evidence. */
export interface LateResult {
  readonly organisationId: string
  readonly messageId: string
  readonly result:
    | { readonly _tag: "Accepted"; readonly providerRef: ProviderRef }
    | { readonly _tag: "Rejected"; readonly reason: string }
}

/**
 * One part of a mobile-originated message (docs/two-way.md), as a
 * provider received it: who sent it, to which number, where it belongs in its message (none: the
 * whole message) and its user data without any header, in its `data_coding`.
 */
export interface IncomingPart {
  /** The route (SMSC) or simulator that passed it on: the parts of one message come the same way. */
  readonly source: string
  /** The sender, E.164 when its address says so (domain/InboundAddress.ts). */
  readonly from: string
  /** The number or short code it was sent to. */
  readonly to: string
  readonly dataCoding: number
  readonly position: PartPosition | undefined
  readonly octets: Uint8Array
}

/** The inbox could not store what it was given (the database is unreachable): the provider must keep it and tell us again. */
export class InboxUnavailable extends Data.TaggedError("InboxUnavailable")<{ readonly cause: unknown }> {}

export class ProviderInbox extends Context.Service<
  ProviderInbox,
  {
    /**
     * Stores a receipt durably; succeeds only once it is committed, so the adapter acknowledges it
     * after (SMPP `deliver_sm_resp`). A repeated receipt is stored once. It is applied to its
     * message later, whenever that message can take it.
     */
    readonly receipt: (receipt: IncomingReceipt) => Effect.Effect<void, InboxUnavailable>
    /**
     * `receipt` for a provider that reports in rounds: stores them together; whether each was
     * stored (one that was not is to be reported again, as an unavailable `receipt`).
     */
    readonly receipts: (receipts: ReadonlyArray<IncomingReceipt>) => Effect.Effect<ReadonlyArray<boolean>>
    /**
     * Stores one part of a mobile-originated message durably; succeeds only once it is committed,
     * so the adapter acknowledges it after. A part sent again is stored once.
     */
    readonly mobileOriginated: (part: IncomingPart) => Effect.Effect<void, InboxUnavailable>
    /** Stores a late answer to a submission as evidence for the verifier; repeated evidence is stored once. */
    readonly lateResult: (result: LateResult) => Effect.Effect<void, InboxUnavailable>
  }
>()("sms/ProviderInbox") {}
