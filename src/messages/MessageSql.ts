/**
 * The pieces of SQL every statement over `messages` is written with: the final statuses as a
 * literal list, a message's select list (its text read from its batch's `message_texts` row
 * when it is a batch's member), the columns a status change returns for the webhook outbox, the
 * CTE that stores a batch's text once, and the reading of one instant (the queues' next times).
 */
import { Effect } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { fromDatabase } from "../db/Statements.ts"
import { finalStatuses } from "../domain/MessageStatus.ts"

/** The final statuses as SQL literals, so that the planner matches the partial index messages_erasable. */
export const finalList = `(${finalStatuses.map((s) => `'${s}'`).join(", ")})`

/**
 * A message's text: its own, or (a batch's member: null in its row) its batch's in `message_texts`.
 * `row` names the row of `messages` (its alias, or the table).
 */
const textOf = (row: string) =>
  `coalesce(${row}.text, (SELECT t.text FROM message_texts AS t WHERE t.organisation_id = ${row}.organisation_id AND t.batch_id = ${row}.batch_id))`

/** The select list of a MessageRow, optionally qualified by a table alias. */
export const messageColumns = (alias = "") => {
  const a = alias === "" ? "" : `${alias}.`
  return `${a}organisation_id::text, ${a}id::text, ${a}batch_id::text, ${a}to_number, ${a}sender_name,
  ${textOf(alias === "" ? "messages" : alias)} AS text, ${a}segments::integer, ${a}status, ${a}send_at, ${a}delivery_time, ${a}erased_at`
}

type Fragment = Statement.Fragment

/**
 * The CTE `texts`: the text of each batch among the rows of `source` (which have `batch_id`),
 * stored once in `message_texts` (a batch admitted in parts keeps the first).
 */
export const sharedTexts = (sql: SqlClient.SqlClient, organisationId: string, source: Fragment, text: Fragment) =>
  sql`texts AS (
      INSERT INTO message_texts (organisation_id, batch_id, text)
      SELECT ${organisationId}, s.batch_id, ${text} FROM ${source} AS s WHERE s.batch_id IS NOT NULL GROUP BY s.batch_id
      ON CONFLICT DO NOTHING)`

/** What a status change returns besides the row it moved: the columns the webhook outbox snapshots. */
export const movedColumns = (alias: string) =>
  `${alias}.batch_id, ${alias}.to_number, ${alias}.sender_name, ${alias}.segments, ${alias}.status, ${alias}.send_at, ${alias}.delivery_time`

/** Reads the value of an SQL expression of one instant, if any. */
export const instantOf = (sql: SqlClient.SqlClient) => (expression: Statement.Fragment) =>
  fromDatabase(sql<{ at: Date | null }>`SELECT ${expression} AS at`.pipe(Effect.map(([row]) => row?.at ?? undefined)))
