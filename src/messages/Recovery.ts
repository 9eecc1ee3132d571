/**
 * Recovery of messages whose work ended without settling them (contract section 4): a message
 * left `processing` by a process whose lease ran out (it died), or by this process's own work
 * that ended without an outcome (a commit whose answer was lost, say), is settled as `failed`
 * when it provably never reached the provider (not yet marked as handed over), else as `unknown`
 * for the verifier, never sent again. An immediate send's idempotency key then holds the
 * matching answer.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { now } from "../Time.ts"
import { WorkerLease } from "../WorkerLease.ts"
import type { MessageRow } from "./MessageBody.ts"
import { messageColumns } from "./MessageStore.ts"
import { Settlement } from "./Settlement.ts"

export interface AbandonedMessage extends MessageRow {
  /** The provider may have been called: settled as unknown, not failed. */
  readonly maybeSent: boolean
}

/** Most messages one recovery round settles. */
export const recoveryRoundMax = 100

const returned = messageColumns("m")

export class Recovery extends Context.Service<Recovery, {
  /** Settles up to `recoveryRoundMax` abandoned messages (see above); returns how many. */
  readonly recoverAbandoned: Effect.Effect<number, SqlError.SqlError>
  /** Settles this one message if it is abandoned; true when it did. */
  readonly recoverMessage: (organisationId: string, messageId: string) => Effect.Effect<boolean, SqlError.SqlError>
  /** Forgets processes whose lease ran out long ago and that own no message any more. */
  readonly forgetDeadWorkers: Effect.Effect<void, SqlError.SqlError>
}>()("sms/Recovery") {
  static readonly layer = Layer.effect(Recovery, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settlement = yield* Settlement
    const lease = yield* WorkerLease

    /**
     * A dead process's messages, and this process's own that it is not working on. What this
     * process works on is read again after the query: work that began meanwhile made its row
     * `processing` only after it was counted as work, so a row the query saw and no longer worked
     * on has been left for good.
     */
    const abandoned = (only?: { readonly organisationId: string; readonly messageId: string }) =>
      Effect.gen(function*() {
        const at = yield* now
        const rows = yield* sql<AbandonedMessage & { readonly own: boolean }>`SELECT ${sql.literal(returned)},
            (m.submitted_at IS NOT NULL) AS maybe_sent, (m.worker_id = ${lease.workerId}::uuid) AS own
          FROM messages AS m LEFT JOIN workers AS w ON w.id = m.worker_id
          WHERE m.status = 'processing'
            AND CASE WHEN m.worker_id = ${lease.workerId}::uuid
              THEN m.id::text NOT IN (SELECT json_array_elements_text(${JSON.stringify(lease.workingOn())}::json))
              ELSE w.id IS NULL OR w.lease_until < ${at} END
            ${only === undefined ? sql`` : sql`AND m.organisation_id = ${only.organisationId} AND m.id = ${only.messageId}`}
          ORDER BY m.updated_at LIMIT ${recoveryRoundMax}`
        return rows.filter((m) => !(m.own && lease.isWorkingOn(m.id)))
      })

    const settleAll = (messages: ReadonlyArray<AbandonedMessage>) =>
      Effect.forEach(messages, (m) =>
        settlement.settle(m, m.maybeSent ? { _tag: "Unknown" } : { _tag: "NeverSent" }, "recovery"), {
        concurrency: "unbounded",
        discard: true
      })

    return Recovery.of({
      recoverAbandoned: Effect.gen(function*() {
        const found = yield* abandoned()
        yield* settleAll(found)
        if (found.length > 0) {
          yield* Effect.logWarning("recovered messages left processing").pipe(Effect.annotateLogs({
            count: found.length,
            ofThisProcess: found.filter((m) => m.own).length
          }))
        }
        return found.length
      }).pipe(Effect.withSpan("Recovery.recoverAbandoned")),
      recoverMessage: Effect.fn("Recovery.recoverMessage")(function*(organisationId: string, messageId: string) {
        const found = yield* abandoned({ organisationId, messageId })
        yield* settleAll(found)
        return found.length > 0
      }),
      forgetDeadWorkers: Effect.gen(function*() {
        const at = yield* now
        yield* sql`DELETE FROM workers AS w WHERE w.lease_until < ${new Date(at.getTime() - 3_600_000)}
          AND NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.status = 'processing' AND m.worker_id = w.id)`
      })
    })
  }))
}
