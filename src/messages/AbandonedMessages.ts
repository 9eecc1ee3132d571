/**
 * What recovery finds in `messages`: the messages left `processing` by work that ended without
 * settling them (a dead process's, or this process's own that nothing works on any more), and
 * whether a process still owns a message in flight. Part of the MessageQueueStore
 * (MessageQueueStore.ts); Recovery.ts settles what it finds.
 */
import type { SqlClient, Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import { workerFragments } from "../processes/ProcessStore.ts"
import type { MessageRow } from "./MessageRow.ts"
import { messageColumns } from "./MessageSql.ts"

export interface AbandonedMessage extends MessageRow {
  /** The provider may have been called: settled as unknown, not failed. */
  readonly maybeSent: boolean
  /** Left by this process (not a dead one). */
  readonly own: boolean
}

export interface AbandonedMessages {
  /**
   * Up to `limit` messages left `processing` by work that ended without settling them: those of
   * processes whose lease ran out by `at`, and this process's (`workerId`) that are not among
   * `workingOn`; of one message when `only` says which.
   */
  readonly abandoned: (
    at: Date,
    workerId: string,
    workingOn: ReadonlyArray<string>,
    limit: number,
    only: { readonly organisationId: string; readonly messageId: string } | undefined
  ) => Fails<ReadonlyArray<AbandonedMessage>>
  /** A predicate on a process row `w` of the workers' table: whether it still owns a message in flight (it must not be forgotten). */
  readonly ownsMessagesInFlight: Statement.Fragment
}

const returned = messageColumns("m")

/** The recovery queries of the MessageQueueStore, on `sql`. */
export const abandonedMessages = (sql: SqlClient.SqlClient): AbandonedMessages => {
  const workers = workerFragments(sql)
  return {
    abandoned: (at, workerId, workingOn, limit, only) =>
      fromDatabase(sql<AbandonedMessage>`SELECT ${sql.literal(returned)},
        (m.submitted_at IS NOT NULL) AS maybe_sent, (m.worker_id = ${workerId}::uuid) AS own
      FROM messages AS m ${workers.leaseOf("m")}
      WHERE m.status = 'processing'
        AND CASE WHEN m.worker_id = ${workerId}::uuid
          THEN m.id::text NOT IN (SELECT json_array_elements_text(${JSON.stringify(workingOn)}::json))
          ELSE ${workers.isDead(at)} END
        ${only === undefined ? sql`` : sql`AND m.organisation_id = ${only.organisationId} AND m.id = ${only.messageId}`}
      ORDER BY m.updated_at LIMIT ${limit}`),
    ownsMessagesInFlight: sql`EXISTS (SELECT 1 FROM messages AS m WHERE m.status = 'processing' AND m.worker_id = w.id)`
  }
}
