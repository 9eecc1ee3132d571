/**
 * The table of message batches (`message_batches`), owned here: a batch's size, its reservation
 * at admission and its send time; its members are messages (MessageStore). The one-statement
 * admission (QuickAdmission) composes the batch's row from `insertOnClaim`.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { ListPosition } from "../domain/NewestFirst.ts"

export interface BatchRow {
  readonly id: string
  readonly recipientCount: number
  readonly creditsReserved: number
  readonly sendAt: Date
  readonly createdAt: Date
}

const columns = "id::text, recipient_count, credits_reserved, send_at, created_at"

export class BatchStore extends Context.Service<
  BatchStore,
  {
    readonly insert: (organisationId: string, batch: BatchRow) => Fails<void>
    /**
     * The batch's row as a fragment of the one-statement admission: the CTE `bt`, inserted once the
     * key `k` is claimed, under the batch id `k` returns.
     */
    readonly insertOnClaim: (organisationId: string, batch: Omit<BatchRow, "id">) => Statement.Fragment
    readonly find: (organisationId: string, id: string) => Fails<BatchRow | undefined>
    /** At most `limit + 1` of the organisation's batches, newest first, after `after`. */
    readonly newestFirst: (
      organisationId: string,
      limit: number,
      after: ListPosition | undefined
    ) => Fails<ReadonlyArray<BatchRow>>
  }
>()("sms/BatchStore") {
  static readonly layer = Layer.effect(
    BatchStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return BatchStore.of({
        insert: (organisationId, b) =>
          fromDatabase(
            sql`INSERT INTO message_batches (organisation_id, id, recipient_count, credits_reserved, send_at, created_at)
          VALUES (${organisationId}, ${b.id}, ${b.recipientCount}, ${b.creditsReserved}, ${b.sendAt}, ${b.createdAt})`.pipe(
              Effect.asVoid
            )
          ),
        insertOnClaim: (organisationId, b) =>
          sql`bt AS (
          INSERT INTO message_batches (organisation_id, id, recipient_count, credits_reserved, send_at, created_at)
          SELECT ${organisationId}, k.batch_id, ${b.recipientCount}, ${b.creditsReserved}, ${b.sendAt}, ${b.createdAt} FROM k)`,
        find: (organisationId, id) =>
          fromDatabase(
            sql<BatchRow>`SELECT ${sql.literal(columns)} FROM message_batches
          WHERE organisation_id = ${organisationId} AND id = ${id}`.pipe(Effect.map((rows) => rows[0]))
          ),
        newestFirst: (organisationId, limit, after) =>
          fromDatabase(sql<BatchRow>`SELECT ${sql.literal(columns)}
          FROM message_batches WHERE organisation_id = ${organisationId}
            ${after === undefined ? sql`` : sql`AND (created_at, id) < (${after.createdAt}, ${after.id}::uuid)`}
          ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`)
      })
    })
  )
}
