/**
 * Creating and reading single messages (docs/integrators.md#messages). Admission is one transaction: the
 * idempotency claim, the message row and its credit reservation. An immediate send then waits
 * for the provider outside any transaction and settles in a second one; that part cannot be
 * interrupted by a client that hangs up, so a claimed key always ends with a stored answer.
 *
 * An immediate send this process cannot submit (other processes hold the binds of its route,
 * docs/decisions.md#fair-share-and-fleet-limits) is handed to them through the database: stored `scheduled` and due now,
 * claimed by a holder's dispatcher, which settles it and stores its key's answer; this process
 * answers with that answer once it is stored (BindHolderRelay.ts).
 */
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { type DatabaseUnavailable, isDatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import {
  ErasureNotAllowed,
  type IdempotencyConflict,
  type IdempotencyInProgress,
  type InsufficientCredits,
  type InvalidSchedule,
  NotFound,
  type PersonalDataErased,
  type SenderNameUnavailable,
  type SmsUnavailable,
  ValidationError
} from "../domain/Errors.ts"
import { OptOutStore } from "../consent/OptOutStore.ts"
import { utcDay } from "../domain/Dates.ts"
import { requireFuture } from "../domain/MessageRules.ts"
import { isFuture } from "../domain/SendAt.ts"
import { Idempotency, judgeStoredKey, type NewKey } from "../idempotency/Idempotency.ts"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import { Ids } from "../platform/Ids.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { now } from "../clock/Time.ts"
import { ProcessLease } from "../processes/ProcessLease.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { Erasure } from "./Erasure.ts"
import { MessageAnswers } from "./MessageAnswers.ts"
import type { MessageRow } from "./MessageRow.ts"
import { MessageStore } from "./MessageStore.ts"
import { QuickAdmission, unresolvedSender } from "./QuickAdmission.ts"
import { Recovery } from "./Recovery.ts"
import { requireSendable } from "./Sendability.ts"
import { Settlement } from "./Settlement.ts"
import { Submitter } from "./Submitter.ts"
import { canSend, Provider } from "../provider/Provider.ts"
import { BindHolderRelay } from "./BindHolderRelay.ts"

export interface MessageRequest {
  readonly to: string
  readonly text: string
  readonly senderName: string | undefined
  readonly segments: number
  readonly sendAt: Date | null
}

export type AdmissionError =
  | ValidationError
  | InvalidSchedule
  | IdempotencyConflict
  | IdempotencyInProgress
  | PersonalDataErased
  | InsufficientCredits
  | SmsUnavailable
  | SenderNameUnavailable
  | DatabaseUnavailable

/** A message to a number opted out of the organisation's messages (docs/two-way.md). */
const optedOutError = ValidationError.withMessage("The recipient opted out of this organisation's messages", {
  details: [{ field: "to", message: "opted out of this organisation's messages" }]
})

/** How an immediate send retries marking its message as handed over while the database fails: 50 ms doubling, for 3 s. */
const markRetry = Schedule.exponential(Duration.millis(50)).pipe(Schedule.upTo({ duration: Duration.seconds(3) }))

export class Messages extends Context.Service<
  Messages,
  {
    /**
     * Creates a message under an idempotency key (fingerprint already computed), or replays the
     * answer stored for that key; `replayed` tells which.
     */
    readonly create: (
      organisationId: string,
      key: string,
      fingerprint: string,
      request: MessageRequest
    ) => Effect.Effect<{ readonly answer: Answer; readonly replayed: boolean }, AdmissionError>
    /** The message if it belongs to the organisation. */
    readonly get: (organisationId: string, id: string) => Effect.Effect<MessageRow | undefined, DatabaseUnavailable>
    /**
     * Erases recipient, sender and text of a message whose processing is finished, and the body
     * stored for its idempotency key (a replay then answers 410); billing facts stay.
     */
    readonly erase: (
      organisationId: string,
      id: string
    ) => Effect.Effect<MessageRow, NotFound | ErasureNotAllowed | DatabaseUnavailable>
  }
>()("sms/Messages") {
  static readonly layer = Layer.effect(
    Messages,
    Effect.gen(function* () {
      const { transaction } = yield* Transactions
      const store = yield* MessageStore
      const ledger = yield* Ledger
      const idempotency = yield* Idempotency
      const keys = yield* IdempotencyStore
      const answers = yield* MessageAnswers
      const organisations = yield* Organisations
      const submitter = yield* Submitter
      const settlement = yield* Settlement
      const recovery = yield* Recovery
      const lease = yield* ProcessLease
      const { workerId } = lease
      const ids = yield* Ids
      const quickAdmission = yield* QuickAdmission
      const provider = yield* Provider
      const relay = yield* BindHolderRelay
      const optOuts = yield* OptOutStore

      /** Whether an immediate send goes to the processes holding its route's binds (this one holds none). */
      const isRelayed = (request: MessageRequest): boolean =>
        request.sendAt === null && !canSend(provider.sendable(), request.to)
      const erasure = yield* Erasure

      /** A scheduled creation's answer, known before anything is written: 202 with the message. */
      const scheduledAnswer = (message: MessageRow): Answer => answers.answer("Scheduled", message)
      const keyOf = (
        organisationId: string,
        key: string,
        fingerprint: string,
        messageId: string,
        answer?: Answer
      ): NewKey => ({
        organisationId,
        route: "messages",
        key,
        fingerprint,
        messageId,
        ...(answer === undefined ? {} : { answer })
      })

      /**
       * The admission transaction: the organisation's sending profile (read first, judged only for a
       * new request), the idempotency claim (a scheduled message's 202 is known already and stored
       * with it), the message row and its reservation. Any refusal rolls the claim back.
       */
      const admit = (
        organisationId: string,
        key: string,
        fingerprint: string,
        request: MessageRequest,
        id: string,
        at: Date
      ) =>
        Effect.gen(function* () {
          const profile = yield* organisations.sendingProfile(organisationId, request.senderName)
          const relayed = isRelayed(request)
          const status = request.sendAt === null && !relayed ? ("processing" as const) : ("scheduled" as const)
          const message: MessageRow = {
            organisationId,
            id,
            batchId: null,
            toNumber: request.to,
            senderName: profile.senderName,
            text: request.text,
            segments: request.segments,
            status,
            sendAt: request.sendAt,
            deliveryTime: null,
            erasedAt: null
          }
          const scheduled = request.sendAt === null ? undefined : scheduledAnswer(message)
          const claim = yield* idempotency.claim(keyOf(organisationId, key, fingerprint, id, scheduled))
          if (claim._tag === "Replay") return { _tag: "Answered" as const, answer: claim.answer, replayed: true }
          // refused, the claim rolled back with the rest: the same request succeeds once the number opts in again
          if (yield* optOuts.isOptedOut(organisationId, request.to)) return yield* optedOutError
          const past = requireFuture(request.sendAt, at)
          if (past !== undefined) return yield* past
          yield* requireSendable(profile)
          yield* store.insert(
            organisationId,
            [
              {
                ...message,
                status,
                batchPosition: null,
                workerId: status === "processing" ? workerId : null
              }
            ],
            at
          )
          yield* ledger.reserve(organisationId, [{ messageId: id, credits: request.segments }])
          return scheduled !== undefined
            ? { _tag: "Answered" as const, answer: scheduled, replayed: false }
            : relayed
              ? { _tag: "Relayed" as const, message }
              : { _tag: "Immediate" as const, message }
        }).pipe(transaction)

      /**
       * The common case in one statement (QuickAdmission.ts); a stored key is judged as the claim
       * judges it; anything else goes to the admission transaction. A schedule already in the past
       * goes there directly: it decides between a replay and invalid_schedule.
       */
      const admitQuickly = (
        organisationId: string,
        key: string,
        fingerprint: string,
        request: MessageRequest,
        id: string,
        at: Date
      ) =>
        Effect.gen(function* () {
          if (request.sendAt !== null && !isFuture(request.sendAt, at.getTime()))
            return yield* admit(organisationId, key, fingerprint, request, id, at)
          const relayed = isRelayed(request)
          const message = (senderName: string): MessageRow => ({
            organisationId,
            id,
            batchId: null,
            toNumber: request.to,
            senderName,
            text: request.text,
            segments: request.segments,
            status: request.sendAt === null && !relayed ? "processing" : "scheduled",
            sendAt: request.sendAt,
            deliveryTime: null,
            erasedAt: null
          })
          const quick = yield* quickAdmission.message({
            organisationId,
            key,
            fingerprint,
            id,
            to: request.to,
            senderName: request.senderName,
            text: request.text,
            segments: request.segments,
            sendAt: request.sendAt,
            relayed,
            workerId: request.sendAt === null && !relayed ? workerId : null,
            at,
            today: utcDay(at.getTime()),
            answer:
              request.sendAt === null ? undefined : scheduledAnswer(message(request.senderName ?? unresolvedSender))
          })
          if (quick._tag === "Admitted") {
            const admitted = message(quick.senderName)
            return request.sendAt !== null
              ? { _tag: "Answered" as const, answer: scheduledAnswer(admitted), replayed: false }
              : relayed
                ? { _tag: "Relayed" as const, message: admitted }
                : { _tag: "Immediate" as const, message: admitted }
          }
          if (quick._tag === "Existing") {
            const claim = yield* judgeStoredKey(quick.row, fingerprint)
            if (claim._tag === "Replay") return { _tag: "Answered" as const, answer: claim.answer, replayed: true }
          }
          return yield* admit(organisationId, key, fingerprint, request, id, at)
        })

      /**
       * An immediate send or a schedule once its id is drawn: admission, then (immediate) the provider
       * and settlement; run as this process's work on the message (ProcessLease.working).
       */
      const send = (
        organisationId: string,
        key: string,
        fingerprint: string,
        request: MessageRequest,
        id: string,
        at: Date
      ) =>
        Effect.gen(function* () {
          const admitted = yield* admitQuickly(organisationId, key, fingerprint, request, id, at).pipe(
            // the identical request may have died with its process: settle its message, then replay
            Effect.catchTag("IdempotencyInProgress", (inProgress) =>
              Effect.gen(function* () {
                const messageId = yield* keys.inProgressMessage(organisationId, "messages", key)
                const recovered = messageId !== undefined && (yield* recovery.recoverMessage(organisationId, messageId))
                return recovered ? yield* admit(organisationId, key, fingerprint, request, id, at) : yield* inProgress
              })
            )
          )
          if (admitted._tag === "Answered") return { answer: admitted.answer, replayed: admitted.replayed }
          if (admitted._tag === "Relayed")
            return { answer: yield* relay.awaitAnswer(admitted.message, key), replayed: false }
          // unmarked, it must not reach the provider: the database still failing, it is settled as
          // never sent now, rather than left `processing` for recovery
          const marked = yield* store.markSubmitted(organisationId, [id], yield* now).pipe(
            Effect.retry({ while: isDatabaseUnavailable, schedule: markRetry }),
            Effect.as(true),
            Effect.catchIf(isDatabaseUnavailable, () => Effect.succeed(false))
          )
          if (!marked)
            return {
              answer: yield* settlement.settleAnswer(admitted.message, { _tag: "NeverSent" }, "dispatch"),
              replayed: false
            }
          return { answer: yield* submitter.submitAndAnswer(admitted.message), replayed: false }
        })

      return Messages.of({
        // From the admission on, nothing stops halfway (a client hanging up interrupts its request):
        // a committed admission always goes on to the provider and a stored answer.
        create: Effect.fn("Messages.create")(function* (organisationId, key, fingerprint, request) {
          const at = yield* now
          const id = yield* ids.timeOrdered(at)
          return yield* lease.working(id, send(organisationId, key, fingerprint, request, id, at))
        }, Effect.uninterruptible),
        get: (organisationId, id) => store.find(organisationId, id),
        erase: Effect.fn("Messages.erase")(function* (organisationId, id) {
          const at = yield* now
          return yield* Effect.gen(function* () {
            const existing = yield* store.find(organisationId, id)
            if (existing === undefined) return yield* NotFound.withMessage("No such message")
            const [erased] = yield* erasure.erase([{ organisationId, id }], at)
            // a packed message was erased before (MessagePartitions.ts): nothing is left to erase
            if (erased === undefined && existing.erasedAt !== null) return existing
            if (erased === undefined) {
              return yield* ErasureNotAllowed.withMessage(
                `The message is ${existing.status}: its data can be erased once its processing is finished`
              )
            }
            return erased
          }).pipe(transaction)
        })
      })
    })
  )
}
