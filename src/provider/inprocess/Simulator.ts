/**
 * The deterministic provider simulator (docs/decisions.md#the-provider-simulator), in-process: the outcome depends on
 * the recipient alone. What a real provider would remember (which messages it received, how many
 * times, which receipt it owes and when) lives in the database (SimulatorStore.ts), so its
 * outcomes hold across restarts, `kill -9` and several processes on one database. Receipts go through the
 * service's ProviderInbox like a real provider's, and are sent again until it has stored them.
 * Time goes through Effect's Clock, so the test clock drives the receipt delay.
 *
 * A receipt is sent by the process that took the message, when it falls due (`local`: up to
 * `localReceiptsMax` held in memory, in the order they fall due), its owed row due to any process
 * only `resendAfterMs` later: if that process dies, or the inbox does not confirm, a round (any
 * process) sends it then. So a receipt costs its owed row one delete when it is sent, not a claim
 * and then a write. Under the test clock (not `autonomous`) the same holds: `runDue`, which the test
 * clock's `advance` calls, sends this process's own receipts due, then a round.
 */
import { Context, Duration, Effect, Layer, Queue } from "effect"
import { makeGroupCommit } from "../../db/GroupCommit.ts"
import { now } from "../../clock/Time.ts"
import { makeOutageLog } from "../../observability/RecurringLogs.ts"
import {
  Provider,
  ProviderInbox,
  type Query,
  type QueryResult,
  type Submission,
  type SubmitResult
} from "../Provider.ts"
import { SimulatorControl } from "../SimulatorControl.ts"
import { type DueReceipt, type ReceiptKind, type Recorded, SimulatorStore } from "./SimulatorStore.ts"
import { partsOfText, SimulatorReplies } from "./SimulatorReplies.ts"

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
    case testNumbers.undeliverable:
      return { submit: "accept", receipt: "undeliverable", query: "accepted" }
    case testNumbers.rejected:
      return { submit: "reject", receipt: "none", query: "not_received" }
    case testNumbers.unknownThenAccepted:
      return { submit: "unknown", receipt: "delivered", query: "accepted" }
    case testNumbers.unreachable:
      return { submit: "unreachable", receipt: "none", query: "not_received" }
    case testNumbers.acceptedNoReceipt:
      return { submit: "accept", receipt: "none", query: "accepted" }
    case testNumbers.slow:
      return { submit: "accept", receipt: "delivered", query: "accepted", slow: true }
    case testNumbers.unknownNeverReceived:
      return { submit: "unknown", receipt: "none", query: "not_received" }
    case testNumbers.unknownForGood:
      return { submit: "unknown", receipt: "none", query: "unknown" }
    default:
      return { submit: "accept", receipt: "delivered", query: "accepted" }
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
/** Most receipts a process holds to send itself (beyond, they are owed to the rounds at once). */
export const localReceiptsMax = 50_000

interface Received {
  readonly submission: Submission
  readonly receipt: ReceiptKind
  /** When the receipt is owed; null when none is owed yet. */
  readonly receiptAt: Date | null
  /** Whether this process sends the receipt itself when it falls due (the rounds only later). */
  readonly local: boolean
}

export const simulatorLayer = (options: SimulatorOptions) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const store = yield* SimulatorStore
      const replies = yield* SimulatorReplies
      const inbox = yield* ProviderInbox
      const wake = yield* Queue.sliding<true>(1)

      // what the simulated provider received, stored in sets as submissions arrive; immediate sends
      // in sets of their own, never behind a full set of dispatched messages (docs/decisions.md#fair-share-and-fleet-limits)
      const lane = (name: string) =>
        makeGroupCommit({
          name,
          maxSize: 500,
          runSet: (items: ReadonlyArray<Received>) =>
            Effect.gen(function* () {
              const recorded = yield* store.receive(
                items.map((r) => ({
                  organisationId: r.submission.organisationId,
                  messageId: r.submission.messageId,
                  receipt: r.receipt,
                  receiptAt: r.receiptAt,
                  dueAt:
                    r.receiptAt === null || !r.local ? r.receiptAt : new Date(r.receiptAt.getTime() + resendAfterMs)
                })),
                yield* now
              )
              // a message twice in one set is one row: only its first item counts as new
              const seen = new Set<string>()
              return items.map((r): Recorded | undefined => {
                const key = `${r.submission.organisationId}/${r.submission.messageId}`
                const done = recorded.get(key)
                if (done === undefined || seen.has(key)) return done && { inserted: false, owedRow: null }
                seen.add(key)
                return done
              })
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
          Effect.map(store.received(items), (found) =>
            items.map((q) => (found.has(`${q.organisationId}/${q.messageId}`) ? refOf(q.messageId) : undefined))
          )
      })

      const receiptAt = Effect.map(now, (at) => new Date(at.getTime() + options.receiptDelayMs))

      // a database outage is logged once when it starts and once when it ends, not at every try
      const records = makeOutageLog()
      const queries = makeOutageLog()
      const rounds = makeOutageLog()
      const record = (r: Received) =>
        Effect.tap(receive(r), () => records.succeeded("simulator records submissions again"))

      // the receipts this process sends itself, in the order they fall due (each computed as its
      // submission is recorded, so two lanes may swap neighbours by the time of a set: a receipt
      // waits at most that long behind one due later); `held` counts those decided, recorded or not
      const local: Array<DueReceipt> = []
      let held = 0
      // when the rounds may have a receipt due, as far as this process knows (ms): a receipt it did
      // not keep to send itself, one a query made owed, or the next one owed in the table
      let roundDueAt = 0
      const owedAt = (at: Date) =>
        Effect.sync(() => {
          roundDueAt = Math.min(roundDueAt, at.getTime())
        })
      const holdLocally = () => {
        if (held >= localReceiptsMax) return false
        held++
        return true
      }
      /** Records an accepted submission owing a receipt at `at`, sent by this process when it can hold one more. */
      const recordAccepted = (s: Submission, receipt: "delivered" | "undeliverable", at: Date) =>
        Effect.gen(function* () {
          const own = holdLocally()
          const done = yield* record({ submission: s, receipt, receiptAt: at, local: own }).pipe(
            Effect.onError(() => Effect.sync(() => own && held--))
          )
          if (own && done?.owedRow != null) {
            local.push({
              rowAt: done.owedRow,
              organisationId: s.organisationId,
              messageId: s.messageId,
              receipt,
              receiptAt: at
            })
          } else if (own) held--
          else yield* owedAt(at)
        })

      const submit = (s: Submission): Effect.Effect<SubmitResult> => {
        const b = behaviourOf(s.to)
        const answer = Effect.gen(function* () {
          switch (b.submit) {
            case "reject":
              // received and refused: remembered (and counted) like any submission, with no receipt
              yield* record({ submission: s, receipt: "none", receiptAt: null, local: false })
              return { _tag: "Rejected", reason: "rejected by the provider (simulated)" } as const
            case "unreachable":
              return { _tag: "Unreachable", reason: "the provider could not be reached (simulated)" } as const
            case "unknown":
              // received, but the answer is lost; a receipt is owed only once a query confirmed it
              yield* record({ submission: s, receipt: b.receipt, receiptAt: null, local: false })
              return { _tag: "Unknown", reason: "the provider's answer was lost (simulated)" } as const
            case "accept": {
              if (b.receipt === "none") yield* record({ submission: s, receipt: "none", receiptAt: null, local: false })
              else {
                const at = yield* receiptAt
                yield* recordAccepted(s, b.receipt, at)
                // an answering test number replies one receipt delay after its receipt
                yield* replies.owe(s.to, s.senderName, new Date(at.getTime() + options.receiptDelayMs))
                yield* Queue.offer(wake, true)
              }
              return { _tag: "Accepted", providerRef: refOf(s.messageId) } as const
            }
          }
        }).pipe(
          // a simulator that cannot record what it received behaves like a provider whose answer was lost
          Effect.catchCause((cause) =>
            records
              .failed("simulator could not record a submission", cause)
              .pipe(Effect.as({ _tag: "Unknown", reason: "the simulator could not record it" } as const))
          )
        )
        return b.slow ? Effect.sleep(Duration.millis(options.slowMs)).pipe(Effect.andThen(answer)) : answer
      }

      const query = (q: Query): Effect.Effect<QueryResult> =>
        Effect.gen(function* () {
          const b = behaviourOf(q.to)
          const providerRef = yield* lookup(q)
          yield* queries.succeeded("simulator answers queries again")
          if (providerRef === undefined || b.query === "not_received") {
            return { _tag: "NotReceived", reason: "the provider never received it (simulated)" } as const
          }
          if (b.query === "unknown") return { _tag: "Unknown" } as const
          // an answer that was lost: once confirmed, the receipt it owes is scheduled (once)
          const at = yield* receiptAt
          if (yield* store.oweReceipt(q.organisationId, q.messageId, at))
            yield* owedAt(at).pipe(Effect.andThen(Queue.offer(wake, true)))
          return { _tag: "Accepted", providerRef } as const
        }).pipe(
          Effect.catchCause((cause) =>
            queries.failed("simulator could not answer a query", cause).pipe(Effect.as({ _tag: "Unknown" } as const))
          )
        )

      /** Hands receipts to the service's inbox; those it stored are owed no more. How many. */
      const deliver = (due: ReadonlyArray<DueReceipt>) =>
        Effect.gen(function* () {
          const taken = yield* inbox.receipts(
            due.map((r) => ({
              providerRef: refOf(r.messageId),
              outcome: r.receipt,
              occurredAt: r.receiptAt,
              recipient: null,
              submittedAt: null
            }))
          )
          const stored = due.filter((_, i) => taken[i])
          yield* store.sent(stored)
          return stored.length
        })

      const runRound = Effect.gen(function* () {
        const at = yield* now
        // claimed for a while: if the inbox does not confirm, another round sends them again
        const due = yield* store.claimDue(at, new Date(at.getTime() + resendAfterMs), receiptRoundMax)
        return due.length === 0 ? 0 : yield* deliver(due)
      }).pipe(Effect.withSpan("Simulator.runRound"))

      /** Sends up to a round of this process's own receipts that are due; one the inbox did not take is left to the rounds. */
      const runLocal = Effect.gen(function* () {
        const at = (yield* now).getTime()
        let n = 0
        while (n < local.length && n < receiptRoundMax && local[n]!.receiptAt.getTime() <= at) n++
        if (n === 0) return 0
        const due = local.splice(0, n)
        held -= n
        return yield* deliver(due)
      }).pipe(Effect.withSpan("Simulator.runLocal"))

      const sendReceipt = (organisationId: string, messageId: string, outcome: "delivered" | "undeliverable") =>
        Effect.gen(function* () {
          if (!(yield* store.forceReceipt(organisationId, messageId, outcome, yield* now))) return false
          yield* runRound
          return true
        })

      /** Sends the replies due now to the service's inbox; how many. */
      const runReplies = Effect.flatMap(now, (at) => replies.runDue(at, inbox.mobileOriginated))

      /** An MO from `from` to `to` saying `text`, handed to the inbox now (the operator's demand). */
      const sendInbound = (from: string, to: string, text: string) =>
        Effect.gen(function* () {
          const parts = partsOfText(from, to, text, moRef++)
          yield* Effect.forEach(parts, inbox.mobileOriginated, { discard: true })
        })
      let moRef = 0

      if (options.autonomous) {
        // this process's own receipts as they fall due; a round of the table only when it may hold
        // one due (and at least every pollMs, for other processes' receipts)
        const loop = Effect.gen(function* () {
          const roundAt = yield* now
          yield* runLocal
          yield* runReplies
          if (roundAt.getTime() >= roundDueAt) {
            // what falls due meanwhile lowers it again; a round that fails is tried again at once
            roundDueAt = Infinity
            yield* Effect.gen(function* () {
              if ((yield* runRound) >= receiptRoundMax) return yield* owedAt(roundAt)
              // what was due by the round's start, the round took (or another process holds it)
              const owed = yield* store.nextDue(roundAt)
              yield* owedAt(new Date(Math.min(owed?.getTime() ?? Infinity, roundAt.getTime() + pollMs)))
            }).pipe(Effect.onError(() => owedAt(roundAt)))
          }
          yield* rounds.succeeded("simulator sends receipts again")
          const at = yield* now
          const next = Math.min(roundDueAt, local[0]?.receiptAt.getTime() ?? Infinity)
          const waitMs = Math.max(0, Math.min(pollMs, next - at.getTime()))
          yield* Queue.take(wake).pipe(
            Effect.timeoutOrElse({ duration: Duration.millis(waitMs), orElse: () => Effect.succeed(true) })
          )
        }).pipe(
          Effect.catchCause((cause) =>
            rounds
              .failed("simulator receipts failed; retrying", cause)
              .pipe(Effect.andThen(Effect.sleep(Duration.millis(pollMs))))
          ),
          Effect.forever
        )
        yield* Effect.forkScoped(loop)
      }

      return Context.make(
        Provider,
        Provider.of({
          submit,
          query,
          health: Effect.succeed([{ route: simulatorRoute, connected: true, detail: "in-process simulator" }]),
          routeOf: () => simulatorRoute,
          sendable: () => ({ _tag: "All" }),
          pace: () => Effect.void,
          paced: false,
          submitDeadlineMs: options.slowMs + 1_000,
          ratePerSecond: undefined
        })
      ).pipe(
        Context.add(
          SimulatorControl,
          SimulatorControl.of({
            // the test clock's steps: this process's own receipts due, then a round of the table
            runDue: Effect.zipWith(
              Effect.zipWith(runLocal, runRound, (own, round) => own + round),
              runReplies,
              (receipts, sent) => receipts + sent
            ),
            nextDue: (after) =>
              Effect.gen(function* () {
                const owed = yield* store.nextDue(new Date(after.getTime() + 1))
                const reply = yield* replies.nextDue(after)
                const own = local.find((r) => r.receiptAt > after)?.receiptAt
                const times = [owed, reply, own].flatMap((d) => (d === undefined ? [] : [d.getTime()]))
                return times.length === 0 ? undefined : new Date(Math.min(...times))
              }),
            sendInbound,
            sendReceipt,
            compact: store.dropReceipted
          })
        )
      )
    })
  ).pipe(Layer.provide(Layer.merge(SimulatorStore.layer, SimulatorReplies.layer)))
