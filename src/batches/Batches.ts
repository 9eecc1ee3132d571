/**
 * Batches (spec 2.4-2.6, 4.5, 4.6): one text, one sender, one send time, up to 1000 recipients.
 * Admission is atomic: the idempotency claim, the batch row, every message in one multi-row
 * insert, and one reservation of segments x recipients; anything wrong and nothing is written.
 * The common case is one statement (QuickAdmission.ts), the rest one transaction. Members are ordinary scheduled messages for the dispatcher.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { inTransaction } from "../db/Transaction.ts"
import { InvalidCursor, NotFound } from "../domain/Errors.ts"
import { utcDay } from "../domain/Dates.ts"
import { requireFuture } from "../domain/MessageRules.ts"
import { isFuture } from "../domain/SendAt.ts"
import { MessageStatuses, type MessageStatus } from "../domain/MessageStatus.ts"
import { type ListPage, type ListPosition, pageOf } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import { Idempotency, judgeStoredKey } from "../idempotency/Idempotency.ts"
import { Ids } from "../Ids.ts"
import { Ledger } from "../ledger/Ledger.ts"
import type { Answer } from "../idempotency/Answer.ts"
import type { MessageRow } from "../messages/MessageBody.ts"
import type { AdmissionError } from "../messages/Messages.ts"
import { messageColumns, MessageStore } from "../messages/MessageStore.ts"
import { QuickAdmission } from "../messages/QuickAdmission.ts"
import { requireSendable } from "../messages/Sendability.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { ServiceSecret } from "../ServiceSecret.ts"
import { now } from "../Time.ts"
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

interface BatchRow {
  readonly id: string
  readonly recipientCount: number
  readonly creditsReserved: number
  readonly sendAt: Date
  readonly createdAt: Date
}

type Counts = Record<MessageStatus, number>

const zeroCounts = (): Counts => Object.fromEntries(MessageStatuses.map((s) => [s, 0])) as Counts

/** The Batch resource, spec 2.5. */
export const batchBody = (b: BatchRow, counts: Counts) => ({
  id: b.id,
  recipient_count: b.recipientCount,
  credits_reserved: b.creditsReserved,
  send_at: b.sendAt.toISOString(),
  created_at: b.createdAt.toISOString(),
  counts
})

export const batchLocation = (id: string) => `/api/sms/v2/message-batches/${id}/`

const columns = messageColumns()

export class Batches extends Context.Service<Batches, {
  /** Admits a batch under an idempotency key, or replays the answer stored for it. */
  readonly create: (
    organisationId: string,
    key: string,
    fingerprint: string,
    request: BatchRequest
  ) => Effect.Effect<{ readonly answer: Answer; readonly replayed: boolean }, AdmissionError>
  /** The batch with its current per-status counts. */
  readonly get: (organisationId: string, id: string) => Effect.Effect<ReturnType<typeof batchBody>, NotFound | SqlError.SqlError>
  /** A page of at most `limit` of the organisation's batches, newest first, after `after`, each with its current counts. */
  readonly list: (
    organisationId: string,
    limit: number,
    after: ListPosition | undefined
  ) => Effect.Effect<ListPage<ReturnType<typeof batchBody>>, SqlError.SqlError>
  /** One page of the batch's messages in submitted order, and the cursor of the next page (null on the last). */
  readonly page: (organisationId: string, id: string, cursor: string | undefined) => Effect.Effect<
    { readonly results: ReadonlyArray<MessageRow>; readonly nextCursor: string | null },
    NotFound | InvalidCursor | SqlError.SqlError
  >
}>()("sms/Batches") {
  static readonly layer = Layer.effect(Batches, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const idempotency = yield* Idempotency
    const organisations = yield* Organisations
    const store = yield* MessageStore
    const ledger = yield* Ledger
    const secret = yield* ServiceSecret
    const quickAdmission = yield* QuickAdmission

    const findBatch = (organisationId: string, id: string) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* NotFound.withMessage("No such batch")
        const [row] = yield* sql<BatchRow>`SELECT id::text, recipient_count, credits_reserved, send_at, created_at
          FROM message_batches WHERE organisation_id = ${organisationId} AND id = ${id}`
        return row === undefined ? yield* NotFound.withMessage("No such batch") : row
      })

    /**
     * The admission transaction, the general path: the idempotency claim with its 202 (known
     * before anything is written, rolled back with the rest), the batch row, every member in one
     * insert, one reservation that may span lots.
     */
    const admit = (organisationId: string, key: string, fingerprint: string, request: BatchRequest, batch: BatchRow, memberIds: ReadonlyArray<string>, answer: Answer) =>
      Effect.gen(function*() {
        const profile = yield* organisations.sendingProfile(organisationId, request.senderName)
        const claim = yield* idempotency.claim(organisationId, "message-batches", key, fingerprint, { batchId: batch.id, answer }, batch.createdAt)
        if (claim._tag === "Replay") return { answer: claim.answer, replayed: true }
        const past = requireFuture(request.sendAt, batch.createdAt)
        if (past !== undefined) return yield* past
        const senderName = yield* requireSendable(profile)
        yield* sql`INSERT INTO message_batches (organisation_id, id, recipient_count, credits_reserved, send_at, created_at)
          VALUES (${organisationId}, ${batch.id}, ${batch.recipientCount}, ${batch.creditsReserved}, ${request.sendAt}, ${batch.createdAt})`
        yield* store.insert(organisationId, request.recipients.map((to, i) => ({
          id: memberIds[i]!,
          batchId: batch.id,
          batchPosition: i + 1,
          toNumber: to,
          senderName,
          text: request.text,
          segments: request.segments,
          status: "scheduled" as const,
          sendAt: request.sendAt,
          workerId: null
        })), batch.createdAt)
        yield* ledger.reserve(organisationId, memberIds.map((messageId) => ({ messageId, credits: request.segments })))
        return { answer, replayed: false }
      }).pipe(inTransaction(sql))

    const create = Effect.fn("Batches.create")(function*(organisationId: string, key: string, fingerprint: string, request: BatchRequest) {
      const [batchId, at] = [yield* ids.uuid, yield* now]
      const memberIds = yield* Effect.forEach(request.recipients, () => ids.uuid)
      const batch: BatchRow = {
        id: batchId,
        recipientCount: request.recipients.length,
        creditsReserved: request.recipients.length * request.segments,
        sendAt: request.sendAt,
        createdAt: at
      }
      const answer: Answer = {
        status: 202,
        body: batchBody(batch, { ...zeroCounts(), scheduled: batch.recipientCount }),
        location: batchLocation(batchId)
      }
      const general = admit(organisationId, key, fingerprint, request, batch, memberIds, answer)
      // a schedule already in the past: the general path decides between a replay and invalid_schedule
      if (!isFuture(request.sendAt, at.getTime())) return yield* general
      const quick = yield* quickAdmission.batch({
        organisationId,
        key,
        fingerprint,
        batchId,
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
      Effect.gen(function*() {
        const byBatch = new Map(batchIds.map((id) => [id, zeroCounts()]))
        if (batchIds.length === 0) return byBatch
        const rows = yield* sql<{ batchId: string; status: MessageStatus; n: number }>`SELECT batch_id::text, status,
            count(*)::integer AS n FROM messages
          WHERE organisation_id = ${organisationId} AND batch_id = ANY(${batchIds}::uuid[]) GROUP BY batch_id, status`
        for (const r of rows) byBatch.get(r.batchId)![r.status] = r.n
        return byBatch
      })

    const get = Effect.fn("Batches.get")(function*(organisationId: string, id: string) {
      const batch = yield* findBatch(organisationId, id)
      const counts = yield* countsOf(organisationId, [batch.id])
      return batchBody(batch, counts.get(batch.id)!)
    })

    const list = Effect.fn("Batches.list")(function*(organisationId: string, limit: number, after: ListPosition | undefined) {
      // one more than asked tells whether a next page exists
      const rows = yield* sql<BatchRow>`SELECT id::text, recipient_count, credits_reserved, send_at, created_at
        FROM message_batches WHERE organisation_id = ${organisationId}
          ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after.createdAt}, ${after.id}::uuid)`}
        ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
      const { rows: batches, nextCursor } = pageOf(rows, limit)
      const counts = yield* countsOf(organisationId, batches.map((b) => b.id))
      return { rows: batches.map((b) => batchBody(b, counts.get(b.id)!)), nextCursor }
    })

    const page = Effect.fn("Batches.page")(function*(organisationId: string, id: string, cursor: string | undefined) {
      yield* findBatch(organisationId, id)
      const after = cursor === undefined ? 0 : decodeCursor(secret, id, cursor)
      if (after === undefined) {
        return yield* InvalidCursor.withMessage("The cursor is not a next_cursor of this batch; use it unchanged or restart from the first page")
      }
      const rows = yield* sql<MessageRow & { batchPosition: number }>`SELECT ${sql.literal(columns)}, batch_position
        FROM messages WHERE organisation_id = ${organisationId} AND batch_id = ${id} AND batch_position > ${after}
        ORDER BY batch_position LIMIT ${pageSizeMax + 1}`
      const results = rows.slice(0, pageSizeMax)
      const last = results[results.length - 1]
      return {
        results,
        nextCursor: rows.length > pageSizeMax && last !== undefined ? encodeCursor(secret, id, last.batchPosition) : null
      }
    })

    return Batches.of({ create, get, list, page })
  }))
}

