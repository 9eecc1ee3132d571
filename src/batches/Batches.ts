/**
 * Batches (docs/integrators.md#batches): one text, one sender, one send time, up to 1000 recipients.
 * Admission is atomic: the idempotency claim, the batch row, every message in one multi-row
 * insert, and one reservation of segments x recipients; anything wrong and nothing is written.
 * The common case is one statement (QuickAdmission.ts), the rest one transaction. Members are
 * ordinary scheduled messages for the dispatcher.
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import { utcDay } from "../domain/Dates.ts"
import { InvalidCursor, NotFound, ValidationError } from "../domain/Errors.ts"
import { OptOutStore } from "../consent/OptOutStore.ts"
import { requireFuture } from "../domain/MessageRules.ts"
import { type ListPage, type ListPosition, pageOf } from "../domain/NewestFirst.ts"
import { isFuture } from "../domain/SendAt.ts"
import { isUuid } from "../domain/Uuid.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { Idempotency, judgeStoredKey } from "../idempotency/Idempotency.ts"
import { Ids } from "../platform/Ids.ts"
import { Ledger } from "../ledger/Ledger.ts"
import type { AdmissionError } from "../messages/Messages.ts"
import type { MessageRow } from "../messages/MessageRow.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { QuickAdmission } from "../messages/QuickAdmission.ts"
import { requireSendable } from "../messages/Sendability.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { ServiceSecret } from "../secrets/ServiceSecret.ts"
import { now } from "../clock/Time.ts"
import { type BatchView, zeroCounts } from "./Batch.ts"
import { BatchAnswers } from "./BatchAnswers.ts"
import { type BatchRow, BatchStore } from "./BatchStore.ts"
import { decodeCursor, encodeCursor } from "./Cursor.ts"

/** Most messages on one page of a batch's list. */
export const pageSizeMax = 100

export interface BatchRequest {
  readonly recipients: ReadonlyArray<string>
  readonly text: string
  readonly senderName: string | undefined
  readonly segments: number
  readonly sendAt: Date
}

export class Batches extends Context.Service<
  Batches,
  {
    /** Admits a batch under an idempotency key, or replays the answer stored for it. */
    readonly create: (
      organisationId: string,
      key: string,
      fingerprint: string,
      request: BatchRequest
    ) => Effect.Effect<{ readonly answer: Answer; readonly replayed: boolean }, AdmissionError>
    /** The batch with its current per-status counts. */
    readonly get: (organisationId: string, id: string) => Effect.Effect<BatchView, NotFound | DatabaseUnavailable>
    /** A page of at most `limit` of the organisation's batches, newest first, after `after`, each with its current counts. */
    readonly list: (
      organisationId: string,
      limit: number,
      after: ListPosition | undefined
    ) => Effect.Effect<ListPage<BatchView>, DatabaseUnavailable>
    /** One page of the batch's messages in submitted order, and the cursor of the next page (null on the last). */
    readonly page: (
      organisationId: string,
      id: string,
      cursor: string | undefined
    ) => Effect.Effect<
      { readonly results: ReadonlyArray<MessageRow>; readonly nextCursor: string | null },
      NotFound | InvalidCursor | DatabaseUnavailable
    >
  }
>()("sms/Batches") {
  static readonly layer = Layer.effect(
    Batches,
    Effect.gen(function* () {
      const { transaction } = yield* Transactions
      const ids = yield* Ids
      const idempotency = yield* Idempotency
      const organisations = yield* Organisations
      const store = yield* BatchStore
      const messages = yield* MessageStore
      const ledger = yield* Ledger
      const secret = yield* ServiceSecret
      const quickAdmission = yield* QuickAdmission
      const answers = yield* BatchAnswers
      const optOuts = yield* OptOutStore

      const findBatch = (organisationId: string, id: string) =>
        Effect.gen(function* () {
          const row = isUuid(id) ? yield* store.find(organisationId, id) : undefined
          return row === undefined ? yield* NotFound.withMessage("No such batch") : row
        })

      /**
       * The admission transaction, the general path: the idempotency claim with its 202 (known
       * before anything is written, rolled back with the rest), the batch row, every member in one
       * insert, one reservation that may span lots. A member whose recipient opted out is created
       * `failed` without a credit (docs/two-way.md), so one STOP never
       * blocks a campaign; when every recipient did, 400 naming each.
       */
      const admit = (
        organisationId: string,
        key: string,
        fingerprint: string,
        request: BatchRequest,
        batch: BatchRow,
        memberIds: ReadonlyArray<string>
      ) =>
        Effect.gen(function* () {
          const profile = yield* organisations.sendingProfile(organisationId, request.senderName)
          const optedOut = yield* optOuts.optedOutAmong(organisationId, request.recipients)
          const refused = request.recipients.filter((to) => optedOut.has(to)).length
          const everyOne = refused === request.recipients.length
          // every recipient opted out: refused below once the claim has told a replay apart, so the
          // answer claimed with (rolled back unseen) keeps a reservation a batch answer can show
          const admitted: BatchRow = everyOne
            ? batch
            : { ...batch, creditsReserved: (request.recipients.length - refused) * request.segments }
          const answer = answers.answer({
            ...admitted,
            counts: { ...zeroCounts(), scheduled: request.recipients.length - refused, failed: refused }
          })
          const claim = yield* idempotency.claim({
            organisationId,
            route: "message-batches",
            key,
            fingerprint,
            batchId: batch.id,
            answer
          })
          if (claim._tag === "Replay") return { answer: claim.answer, replayed: true }
          if (everyOne) {
            return yield* ValidationError.withMessage("Every recipient opted out of this organisation's messages", {
              details: request.recipients.map((_, i) => ({
                field: `recipients[${i}]`,
                message: "opted out of this organisation's messages"
              }))
            })
          }
          const past = requireFuture(request.sendAt, batch.createdAt)
          if (past !== undefined) return yield* past
          const senderName = yield* requireSendable(profile)
          yield* store.insert(organisationId, admitted)
          yield* messages.insert(
            organisationId,
            request.recipients.map((to, i) => ({
              id: memberIds[i]!,
              batchId: batch.id,
              batchPosition: i + 1,
              toNumber: to,
              senderName,
              text: request.text,
              segments: request.segments,
              status: optedOut.has(to) ? ("failed" as const) : ("scheduled" as const),
              sendAt: request.sendAt,
              workerId: null
            })),
            batch.createdAt
          )
          yield* ledger.reserve(
            organisationId,
            memberIds.flatMap((messageId, i) =>
              optedOut.has(request.recipients[i]!) ? [] : [{ messageId, credits: request.segments }]
            )
          )
          return { answer, replayed: false }
        }).pipe(transaction)

      const create = Effect.fn("Batches.create")(function* (
        organisationId: string,
        key: string,
        fingerprint: string,
        request: BatchRequest
      ) {
        const at = yield* now
        const batchId = yield* ids.timeOrdered(at)
        // in the order of the recipients: the members' ids increase with their positions
        const memberIds = yield* Effect.forEach(request.recipients, () => ids.timeOrdered(at))
        const batch: BatchRow = {
          id: batchId,
          recipientCount: request.recipients.length,
          creditsReserved: request.recipients.length * request.segments,
          sendAt: request.sendAt,
          createdAt: at
        }
        const answer = answers.answer({ ...batch, counts: { ...zeroCounts(), scheduled: batch.recipientCount } })
        const general = admit(organisationId, key, fingerprint, request, batch, memberIds)
        // a schedule already in the past: the general path decides between a replay and invalid_schedule;
        // a recipient opted out: the quick statement claims nothing and the general path admits the others
        if (!isFuture(request.sendAt, at.getTime())) return yield* general
        const quick = yield* quickAdmission.batch({
          organisationId,
          key,
          fingerprint,
          batchId,
          batchRow: store.insertOnClaim(organisationId, batch),
          members: request.recipients.map((to, i) => ({ id: memberIds[i]!, to })),
          senderName: request.senderName,
          text: request.text,
          segments: request.segments,
          sendAt: request.sendAt,
          answer,
          at,
          today: utcDay(at.getTime())
        })
        if (quick._tag === "Admitted") return { answer, replayed: false }
        if (quick._tag === "Existing") {
          const claim = yield* judgeStoredKey(quick.row, fingerprint)
          if (claim._tag === "Replay") return { answer: claim.answer, replayed: true }
        }
        return yield* general
      })

      /** The per-status counts of each of these batches' messages, by batch id (one statement). */
      const countsOf = (organisationId: string, batchIds: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          const byBatch = new Map(batchIds.map((id) => [id, zeroCounts()]))
          for (const r of yield* messages.countsOfBatches(organisationId, batchIds))
            byBatch.get(r.batchId)![r.status] = r.n
          return byBatch
        })

      const get = Effect.fn("Batches.get")(function* (organisationId: string, id: string) {
        const batch = yield* findBatch(organisationId, id)
        const counts = yield* countsOf(organisationId, [batch.id])
        return { ...batch, counts: counts.get(batch.id)! }
      })

      const list = Effect.fn("Batches.list")(function* (
        organisationId: string,
        limit: number,
        after: ListPosition | undefined
      ) {
        const { rows: batches, nextCursor } = pageOf(yield* store.newestFirst(organisationId, limit, after), limit)
        const counts = yield* countsOf(
          organisationId,
          batches.map((b) => b.id)
        )
        return { rows: batches.map((b) => ({ ...b, counts: counts.get(b.id)! })), nextCursor }
      })

      const page = Effect.fn("Batches.page")(function* (
        organisationId: string,
        id: string,
        cursor: string | undefined
      ) {
        yield* findBatch(organisationId, id)
        const after = cursor === undefined ? 0 : decodeCursor(secret, id, cursor)
        if (after === undefined) {
          return yield* InvalidCursor.withMessage(
            "The cursor is not a next_cursor of this batch; use it unchanged or restart from the first page"
          )
        }
        // one more than a page tells whether a next page exists
        const rows = yield* messages.ofBatch(organisationId, id, after, pageSizeMax + 1)
        const results = rows.slice(0, pageSizeMax)
        const last = results[results.length - 1]
        return {
          results,
          nextCursor:
            rows.length > pageSizeMax && last !== undefined ? encodeCursor(secret, id, last.batchPosition) : null
        }
      })

      return Batches.of({ create, get, list, page })
    })
  ).pipe(Layer.provideMerge(BatchStore.layer))
}
