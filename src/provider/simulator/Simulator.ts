/**
 * The deterministic provider simulator (contract section 5), in-process: the outcome depends on
 * the recipient alone. What a real provider would remember (which messages it received, how many
 * times, which receipt it owes and when) lives in the database (`simulator_messages`), so its
 * outcomes hold across restarts, `kill -9` and several processes on one database. Receipts go through the
 * service's ProviderInbox like a real provider's, and are sent again until it has stored them.
 * Time goes through Effect's Clock, so the test clock drives the receipt delay.
 */
import { Context, Duration, Effect, Layer, Queue } from "effect"
import { makeGroupCommit } from "../../db/GroupCommit.ts"
import { now } from "../../clock/Time.ts"
import { makeOutageLog } from "../../observability/RecurringLogs.ts"
import { Provider, ProviderInbox, type Query, type QueryResult, type Submission, type SubmitResult } from "../Provider.ts"
import { SimulatorControl } from "../SimulatorControl.ts"
import { type ReceiptKind, SimulatorStore } from "./SimulatorStore.ts"

export interface SimulatorOptions {
  /** Delay between acceptance and the delivery receipt. */
  readonly receiptDelayMs: number
  /** Acceptance delay of the slow test number. */
  readonly slowMs: number
  /**
   * Whether the simulator sends its receipts by itself when they fall due (a background fiber).
   * Off under the test clock, whose `advance` calls `SimulatorControl.runDue` instead.
   */
  readonly autonomous: boolean
}

/** The test numbers and what each does. Any other number is accepted, then delivered. */
export const testNumbers = {
  delivered: "+261340000001",
  undeliverable: "+261340000002",
  rejected: "+261340000003",
  unknownThenAccepted: "+261340000004",
  unreachable: "+261340000005",
  acceptedNoReceipt: "+261340000006",
  slow: "+261340000007",
  unknownNeverReceived: "+261340000008",
  unknownForGood: "+261340000009"
} as const

interface Behaviour {
  readonly submit: "accept" | "reject" | "unknown" | "unreachable"
  readonly receipt: ReceiptKind
  /** What a status query answers once the simulator received the message. */
  readonly query: "accepted" | "not_received" | "unknown"
  readonly slow?: true
}

const behaviourOf = (to: string): Behaviour => {
  switch (to) {
    case testNumbers.undeliverable: return { submit: "accept", receipt: "undeliverable", query: "accepted" }
    case testNumbers.rejected: return { submit: "reject", receipt: "none", query: "not_received" }
    case testNumbers.unknownThenAccepted: return { submit: "unknown", receipt: "delivered", query: "accepted" }
    case testNumbers.unreachable: return { submit: "unreachable", receipt: "none", query: "not_received" }
    case testNumbers.acceptedNoReceipt: return { submit: "accept", receipt: "none", query: "accepted" }
    case testNumbers.slow: return { submit: "accept", receipt: "delivered", query: "accepted", slow: true }
    case testNumbers.unknownNeverReceived: return { submit: "unknown", receipt: "none", query: "not_received" }
    case testNumbers.unknownForGood: return { submit: "unknown", receipt: "none", query: "unknown" }
    default: return { submit: "accept", receipt: "delivered", query: "accepted" }
  }
}

/** The route name of the simulator: its provider references are `sim:<message id>`. */
export const simulatorRoute = "sim"
const refOf = (messageId: string) => `${simulatorRoute}:${messageId}`

/** Most receipts one round sends. */
const receiptRoundMax = 500
/** A receipt handed to the inbox but not confirmed stored is sent again after this long. */
const resendAfterMs = 5_000
/** Longest the autonomous sender sleeps before looking again (receipts owed by other processes). */
const pollMs = 1_000

interface Received {
  readonly submission: Submission
  readonly receipt: ReceiptKind
  /** When the receipt is owed; null when none is owed yet. */
  readonly receiptAt: Date | null
}

export const SimulatorLive = (options: SimulatorOptions) =>
  Layer.effectContext(Effect.gen(function*() {
    const store = yield* SimulatorStore
    const inbox = yield* ProviderInbox
    const wake = yield* Queue.sliding<true>(1)

    // what the simulated provider received, stored in sets as submissions arrive; immediate sends
    // in sets of their own, never behind a full set of dispatched messages (contract section 11)
    const lane = (name: string) =>
      makeGroupCommit({
        name,
        maxSize: 500,
        runSet: (items: ReadonlyArray<Received>) =>
          Effect.gen(function*() {
            yield* store.receive(items.map((r) => ({
              organisationId: r.submission.organisationId,
              messageId: r.submission.messageId,
              providerRef: refOf(r.submission.messageId),
              receipt: r.receipt,
              receiptAt: r.receiptAt
            })), yield* now)
            return items.map(() => undefined)
          })
      })
    const scheduledLane = yield* lane("simulator")
    const immediateLane = yield* lane("simulator, immediate sends")
    const receive = (r: Received) => (r.submission.immediate === true ? immediateLane : scheduledLane)(r)

    // the provider reference of each message asked about (undefined: never received), looked up
    // in sets as the verifier's concurrent queries arrive
    const lookup = yield* makeGroupCommit({
      name: "simulator queries",
      maxSize: 500,
      runSet: (items: ReadonlyArray<Query>) =>
        Effect.map(store.refsOf(items), (byKey) => items.map((q) => byKey.get(`${q.organisationId}/${q.messageId}`)))
    })

    const receiptAt = Effect.map(now, (at) => new Date(at.getTime() + options.receiptDelayMs))

    // a database outage is logged once when it starts and once when it ends, not at every try
    const records = makeOutageLog()
    const queries = makeOutageLog()
    const rounds = makeOutageLog()
    const record = (r: Received) => Effect.tap(receive(r), () => records.succeeded("simulator records submissions again"))

    const submit = (s: Submission): Effect.Effect<SubmitResult> => {
      const b = behaviourOf(s.to)
      const answer = Effect.gen(function*() {
        switch (b.submit) {
          case "reject":
            // received and refused: remembered (and counted) like any submission, with no receipt
            yield* record({ submission: s, receipt: "none", receiptAt: null })
            return { _tag: "Rejected", reason: "rejected by the provider (simulated)" } as const
          case "unreachable":
            return { _tag: "Unreachable", reason: "the provider could not be reached (simulated)" } as const
          case "unknown":
            // received, but the answer is lost; a receipt is owed only once a query confirmed it
            yield* record({ submission: s, receipt: b.receipt, receiptAt: null })
            return { _tag: "Unknown", reason: "the provider's answer was lost (simulated)" } as const
          case "accept": {
            const at = b.receipt === "none" ? null : yield* receiptAt
            yield* record({ submission: s, receipt: b.receipt, receiptAt: at })
            if (at !== null) yield* Queue.offer(wake, true)
            return { _tag: "Accepted", providerRef: refOf(s.messageId) } as const
          }
        }
      }).pipe(
        // a simulator that cannot record what it received behaves like a provider whose answer was lost
        Effect.catchCause((cause) =>
          records.failed("simulator could not record a submission", cause).pipe(
            Effect.as({ _tag: "Unknown", reason: "the simulator could not record it" } as const)
          ))
      )
      return b.slow ? Effect.sleep(Duration.millis(options.slowMs)).pipe(Effect.andThen(answer)) : answer
    }

    const query = (q: Query): Effect.Effect<QueryResult> =>
      Effect.gen(function*() {
        const b = behaviourOf(q.to)
        const providerRef = yield* lookup(q)
        yield* queries.succeeded("simulator answers queries again")
        if (providerRef === undefined || b.query === "not_received") {
          return { _tag: "NotReceived", reason: "the provider never received it (simulated)" } as const
        }
        if (b.query === "unknown") return { _tag: "Unknown" } as const
        // an answer that was lost: once confirmed, the receipt it owes is scheduled (once)
        if (yield* store.oweReceipt(q.organisationId, q.messageId, yield* receiptAt)) yield* Queue.offer(wake, true)
        return { _tag: "Accepted", providerRef } as const
      }).pipe(Effect.catchCause((cause) =>
        queries.failed("simulator could not answer a query", cause).pipe(Effect.as({ _tag: "Unknown" } as const))
      ))

    const runDue = Effect.gen(function*() {
      const at = yield* now
      // claimed for a while: if the inbox does not confirm, another round sends them again
      const due = yield* store.claimDue(at, new Date(at.getTime() + resendAfterMs), receiptRoundMax)
      if (due.length === 0) return 0
      const sent = yield* Effect.forEach(due, (r) =>
        inbox.receipt({ providerRef: r.providerRef, outcome: r.receipt, occurredAt: r.receiptAt, recipient: null, submittedAt: null }).pipe(
          Effect.as([r]),
          Effect.catchTag("InboxUnavailable", () => Effect.succeed([]))
        ), { concurrency: "unbounded" })
      const stored = sent.flat()
      yield* store.sent(stored)
      return stored.length
    }).pipe(Effect.withSpan("Simulator.runDue"))

    const sendReceipt = (organisationId: string, messageId: string, outcome: "delivered" | "undeliverable") =>
      Effect.gen(function*() {
        if (!(yield* store.forceReceipt(organisationId, messageId, outcome, yield* now))) return false
        yield* runDue
        return true
      })

    if (options.autonomous) {
      const loop = Effect.gen(function*() {
        const roundAt = yield* now
        const sent = yield* runDue
        yield* rounds.succeeded("simulator sends receipts again")
        if (sent >= receiptRoundMax) return
        const at = yield* now
        // what was due by the round's start, the round took (or another process holds it)
        const next = yield* store.nextDue(roundAt)
        const waitMs = next === undefined ? pollMs : Math.max(0, Math.min(pollMs, next.getTime() - at.getTime()))
        yield* Queue.take(wake).pipe(Effect.timeoutOrElse({ duration: Duration.millis(waitMs), orElse: () => Effect.succeed(true) }))
      }).pipe(
        Effect.catchCause((cause) => rounds.failed("simulator receipts failed; retrying", cause).pipe(Effect.andThen(Effect.sleep(Duration.millis(pollMs))))),
        Effect.forever
      )
      yield* Effect.forkScoped(loop)
    }

    return Context.make(Provider, Provider.of({
      submit,
      query,
      health: Effect.succeed([{ route: simulatorRoute, connected: true, detail: "in-process simulator" }]),
      routeOf: () => simulatorRoute,
      sendable: () => ({ _tag: "All" }),
      pace: () => Effect.void,
      submitDeadlineMs: options.slowMs + 1_000,
      ratePerSecond: undefined
    })).pipe(Context.add(SimulatorControl, SimulatorControl.of({ runDue, nextDue: store.nextDue(null), sendReceipt, compact: store.dropReceipted })))
  })).pipe(Layer.provide(SimulatorStore.layer))
