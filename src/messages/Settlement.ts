/**
 * Settles messages on outcomes: each message's status transition and timeline entry, the ledger
 * movement of docs/decisions.md#credits (accepted consumes; failed and blocked release; unknown keeps the
 * reservation) and the answer stored for an in-progress idempotency key, atomically. Outcomes are
 * settled in sets as they arrive (group commit: one transaction, one statement per kind of change,
 * each lot touched once per set), so a slow provider answer delays only its own message. Immediate
 * sends, the dispatcher, the verifier and recovery all settle here.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { identity } from "effect/Function"
import type * as Arr from "effect/Array"
import { AppConfig } from "../config/Config.ts"
import { DatabaseUnavailable, isDatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { makeGroupCommit } from "../db/GroupCommit.ts"
import { Transactions } from "../db/Transactions.ts"
import type { MessageStatus } from "../domain/MessageStatus.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { now } from "../clock/Time.ts"
import { AcceptancesInFlight } from "./AcceptancesInFlight.ts"
import { MessageAnswers } from "./MessageAnswers.ts"
import type { MessageRow } from "./MessageRow.ts"
import { type EventSource, MessageStore, type Transition } from "./MessageStore.ts"

export type Outcome =
  /** The provider took the message (its answer, or verification). */
  | { readonly _tag: "Accepted"; readonly providerRef: string }
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
  /** At its turn its recipient had opted out of the organisation's messages (docs/two-way.md). */
  | { readonly _tag: "OptedOut" }

interface Plan {
  readonly from: ReadonlyArray<MessageStatus>
  readonly to: MessageStatus
  readonly credits: "consume" | "release" | "keep"
}

const plans: { readonly [K in Outcome["_tag"]]: Plan } = {
  Accepted: { from: ["processing", "unknown"], to: "accepted", credits: "consume" },
  // a provider's refusal and "never handed over" are proof enough to end an `unknown` too (recovery
  // may have made the message unknown while this process was cut off from the database)
  Rejected: { from: ["processing", "unknown"], to: "failed", credits: "release" },
  NeverSent: { from: ["processing", "unknown"], to: "failed", credits: "release" },
  Unknown: { from: ["processing"], to: "unknown", credits: "keep" },
  NotReceived: { from: ["unknown"], to: "failed", credits: "release" },
  SenderUnavailable: { from: ["scheduled", "processing"], to: "blocked", credits: "release" },
  SmsUnavailable: { from: ["scheduled", "processing"], to: "failed", credits: "release" },
  OptedOut: { from: ["scheduled", "processing"], to: "failed", credits: "release" }
}

/** Most outcomes settled in one transaction. */
export const settlementSetSizeMax = 500
/**
 * Longest a caller waits for its settlement while the database does not confirm it (an outage),
 * in ms: then it gets DatabaseUnavailable (the edge answers 503 service_unavailable), and the
 * settlement goes on being retried; the message's key answers 409 idempotency_in_progress until
 * it commits, then replays the settled answer. 10 s; a test may provide a shorter wait.
 */
// Stryker disable next-line StringLiteral: the reference's key is unique whatever its text
export const SettlementWaitMs = Context.Reference<number>("sms/SettlementWaitMs", { defaultValue: () => 10_000 })

interface Item {
  readonly message: MessageRow
  readonly outcome: Outcome
  readonly source: EventSource
  readonly at: Date
}

// Stryker disable StringLiteral: the service's key ("sms/Settlement" below) is unique whatever its text
export class Settlement extends Context.Service<
  Settlement,
  {
    /**
     * Applies `outcome` to the message, atomically, in a set with whatever else is being settled.
     * Retries through database outages: what it was given is never dropped, and the caller (the
     * background work on the message: dispatch, verification, recovery) waits until it commits, so
     * the message stays in this process's work until then (ProcessLease.working).
     */
    readonly settle: (
      message: MessageRow,
      outcome: Outcome,
      source: EventSource
    ) => Effect.Effect<void, DatabaseUnavailable>
    /**
     * `settle` for an immediate send, whose caller waits for its answer: returns the answer the
     * outcome gives (the stored one when another path settled the message first). The caller waits
     * `SettlementWaitMs` at the most (the settlement is still retried after).
     */
    readonly settleAnswer: (
      message: MessageRow,
      outcome: Outcome,
      source: EventSource
    ) => Effect.Effect<Answer, DatabaseUnavailable>
  }
>()("sms/Settlement") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(
    Settlement,
    Effect.gen(function* () {
      const store = yield* MessageStore
      const ledger = yield* Ledger
      const keys = yield* IdempotencyStore
      const answers = yield* MessageAnswers
      const { transaction } = yield* Transactions
      const config = yield* AppConfig
      const acceptances = yield* AcceptancesInFlight

      /** The answer an immediate send gives for `outcome`: the message as the outcome leaves it. */
      const answerOf = (message: MessageRow, outcome: Outcome) =>
        answers.answer(outcome._tag, { ...message, status: plans[outcome._tag].to })

      const transitionOf = ({ message, outcome, source, at }: Item): Transition => {
        const plan = plans[outcome._tag]
        return {
          organisationId: message.organisationId,
          id: message.id,
          from: plan.from,
          to: plan.to,
          source,
          at,
          // Stryker disable next-line ConditionalExpression: equivalent, other outcomes have no providerRef (undefined keeps the stored one)
          ...(outcome._tag === "Accepted" ? { providerRef: outcome.providerRef } : {}),
          ...(plan.to === "unknown" ? { verifyAt: new Date(at.getTime() + config.verifyIntervalMs) } : {})
        }
      }

      /** One transaction for items of distinct messages: whether each one moved. */
      const settleDistinct = (items: ReadonlyArray<Item>) =>
        Effect.gen(function* () {
          const from = yield* store.transitionSet(items.map(transitionOf))
          const moved = items.filter((_, i) => from[i] !== undefined)
          // only an immediate send can still hold its key in progress: a scheduled one stored its 202
          yield* keys.answerForMessages(
            // Stryker disable next-line MethodExpression,ConditionalExpression: equivalent, a scheduled message's key is done (its 202), and only keys in progress are written
            moved
              .filter((x) => x.message.sendAt === null)
              .map((x) => ({
                organisationId: x.message.organisationId,
                messageId: x.message.id,
                answer: answerOf(x.message, x.outcome)
              })),
            moved[0]?.at ?? new Date(0)
          )
          // the ledger last: the organisation's lot rows stay locked only until the commit
          yield* ledger.settle(
            moved.flatMap((x) => {
              const credits = plans[x.outcome._tag].credits
              // Stryker disable next-line ArrayDeclaration: equivalent, a hold of no message matches no row
              return credits === "keep"
                ? []
                : [{ organisationId: x.message.organisationId, messageId: x.message.id, kind: credits }]
            })
          )
          // Stryker disable next-line ArrowFunction,ConditionalExpression: equivalent, an immediate send not moved reads the key's stored answer, which is the one just stored
          return from.map((f) => f !== undefined)
        }).pipe(transaction)
      /** Settles a set; a message that appears twice is settled in a later transaction, in order. */
      const runSet = (items: Arr.NonEmptyReadonlyArray<Item>) =>
        Effect.gen(function* () {
          // Stryker disable next-line ArrayDeclaration: equivalent, an array grows as it is written
          const results: Array<boolean> = new Array(items.length)
          let left = items.map((item, index) => ({ item, index }))
          while (left.length > 0) {
            const seen = new Set<string>()
            const now: typeof left = []
            const later: typeof left = []
            for (const x of left) {
              const id = `${x.item.message.organisationId}/${x.item.message.id}`
              if (seen.has(id)) later.push(x)
              else {
                seen.add(id)
                now.push(x)
              }
            }
            const moved = yield* settleDistinct(now.map((x) => x.item))
            for (const [i, x] of now.entries()) results[x.index] = moved[i]!
            left = later
          }
          return results
        })

      const lane = (name: string) =>
        makeGroupCommit({ name, maxSize: settlementSetSizeMax, runSet, retryWhile: isDatabaseUnavailable })
      // Stryker disable next-line StringLiteral: the group commit's name, a label of logs
      const scheduledLane = yield* lane("settlement")
      // an immediate send, whose caller waits, settles in sets of its own: never behind a full set
      // of dispatched messages (docs/decisions.md#fair-share-and-fleet-limits); a message always takes the same lane, so its
      // outcomes still apply in order
      // Stryker disable next-line StringLiteral: the group commit's name, a label of logs
      const immediateLane = yield* lane("settlement of immediate sends")
      const settleInSet = (item: Item) => (item.message.sendAt === null ? immediateLane : scheduledLane)(item)

      /** Settles in a set; whether this outcome moved the message. `waited` bounds the wait for the set's commit. */
      const settleMoved = Effect.fnUntraced(function* (
        message: MessageRow,
        outcome: Outcome,
        source: EventSource,
        waited: (settled: Effect.Effect<boolean, DatabaseUnavailable>) => Effect.Effect<boolean, DatabaseUnavailable>
      ) {
        const settled = waited(settleInSet({ message, outcome, source, at: yield* now }))
        // a receipt arriving meanwhile waits for the acceptance (AcceptancesInFlight.ts)
        return yield* outcome._tag === "Accepted" ? acceptances.settling(outcome.providerRef, settled) : settled
      })
      /** The caller's wait, at most SettlementWaitMs. */
      const waitedAtMost = (settled: Effect.Effect<boolean, DatabaseUnavailable>) =>
        Effect.gen(function* () {
          return yield* Effect.timeoutOrElse(settled, {
            duration: Duration.millis(yield* SettlementWaitMs),
            orElse: () =>
              Effect.fail(new DatabaseUnavailable("the database did not confirm the settlement in time; it is retried"))
          })
        })

      return Settlement.of({
        // untraced: run for every dispatched message (a span and stack captures each); the sets' statements are traced.
        // No bound on the wait: nobody waits for an answer, and a bound costs a timer and two fibers a message
        settle: (message, outcome, source) => Effect.asVoid(settleMoved(message, outcome, source, identity)),
        // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
        settleAnswer: Effect.fn("Settlement.settleAnswer")(function* (
          message: MessageRow,
          outcome: Outcome,
          source: EventSource
        ) {
          const moved = yield* settleMoved(message, outcome, source, waitedAtMost)
          const answer = answerOf(message, outcome)
          if (moved) return answer
          return (yield* keys.answerOfMessage(message.organisationId, message.id)) ?? answer
        })
      })
    })
  )
}
