/**
 * A batch's completion: `batch.completed` (docs/decisions.md#webhooks) written in the transaction
 * of the change that makes its last member final, and the batch locks that make the count of its
 * members that are not final see every change committed before it (MessageStore.ts takes them
 * too, to forget a batch's text once its last member is erased).
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { webhookOutbox, webhookSubscribed } from "../webhooks/WebhookStore.ts"
import { finalList } from "./MessageSql.ts"

/** Per moved message: its batch, and whether that batch may have completed with it and someone wants to know. */
export interface BatchCheck {
  readonly batchOrganisationId: string | null
  readonly batchId: string | null
  readonly batchCheck: boolean
}

/** The distinct batches (`organisation:batch`) among `pairs` of organisation and batch (null: none), sorted. */
export const batchKeys = (pairs: ReadonlyArray<readonly [string, string | null]>) =>
  [
    ...new Set(pairs.flatMap(([organisationId, batchId]) => (batchId === null ? [] : [`${organisationId}:${batchId}`])))
  ].sort()

/**
 * Locks the batches `keys` (of `batchKeys`) for `purpose` to the transaction's end, in key order:
 * a statement run after it sees every change committed by the transactions that held one before.
 */
export const lockBatches = (sql: SqlClient.SqlClient, purpose: string, keys: ReadonlyArray<string>) =>
  sql`SELECT pg_advisory_xact_lock(hashtext(${purpose} || ':' || k)) FROM unnest(${keys}::text[]) AS k ORDER BY k`

/**
 * `batch.completed` (docs/decisions.md#webhooks), written with the change that makes a batch's last
 * member final. Two members finishing in concurrent transactions would each see the other not
 * final yet; so the batches are locked (an advisory lock held to the transaction's end) and
 * counted in a statement after the lock, which sees every change committed before it.
 */
export const batchCompletion = (sql: SqlClient.SqlClient) => ({
  batchCheck: (moved: string) =>
    sql.literal(`${moved}.organisation_id::text AS batch_organisation_id, ${moved}.batch_id::text AS batch_id, (${moved}.batch_id IS NOT NULL AND ${moved}.status IN ${finalList}
      AND ${webhookSubscribed(`${moved}.organisation_id`, "'batch.completed'")}) AS batch_check`),
  completeBatches: (checked: ReadonlyArray<BatchCheck>, at: Date) => {
    const keys = batchKeys(
      checked.flatMap((c) =>
        c.batchCheck && c.batchOrganisationId !== null ? [[c.batchOrganisationId, c.batchId]] : []
      )
    )
    if (keys.length === 0) return Effect.void
    const batches = keys.map((k) => ({ organisation_id: k.slice(0, 36), batch_id: k.slice(37) }))
    return Effect.gen(function* () {
      yield* lockBatches(sql, "batch", keys)
      // each batch's members through the index that leads with (organisation_id, batch_id)
      yield* sql`WITH done AS (
          SELECT b.organisation_id, b.batch_id FROM json_to_recordset(${JSON.stringify(batches)}::json) AS b(organisation_id uuid, batch_id uuid)
          WHERE NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.organisation_id = b.organisation_id AND m.batch_id = b.batch_id
            AND m.status NOT IN ${sql.literal(finalList)})),
        ${webhookOutbox(sql).batchEvents("done", at)}
        SELECT 1`
    })
  }
})
