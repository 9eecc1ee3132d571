/**
 * Recovery of messages whose process died while it worked on them (contract section 4): a
 * message left `processing` by a process whose lease ran out is settled as `failed` when it
 * provably never reached the provider (not yet marked as handed over), else as `unknown` for the
 * verifier, never sent again. An immediate send's idempotency key then holds the matching answer.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { now } from "../Time.ts"
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
  /** Settles up to `recoveryRoundMax` messages abandoned by dead processes (never `ownWorker`'s); returns how many. */
  readonly recoverAbandoned: (ownWorker: string) => Effect.Effect<number, SqlError.SqlError>
  /** Settles this one message if its process died; true when it did. */
  readonly recoverMessage: (organisationId: string, messageId: string, ownWorker: string) => Effect.Effect<boolean, SqlError.SqlError>
  /** Forgets processes whose lease ran out long ago and that own no message any more. */
  readonly forgetDeadWorkers: Effect.Effect<void, SqlError.SqlError>
}>()("sms/Recovery") {
  static readonly layer = Layer.effect(Recovery, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settlement = yield* Settlement

    const abandoned = (at: Date, ownWorker: string, only?: { readonly organisationId: string; readonly messageId: string }) =>
      sql<AbandonedMessage>`SELECT ${sql.literal(returned)}, (m.submitted_at IS NOT NULL) AS maybe_sent
        FROM messages AS m LEFT JOIN workers AS w ON w.id = m.worker_id
        WHERE m.status = 'processing' AND m.worker_id IS DISTINCT FROM ${ownWorker}::uuid
          AND (w.id IS NULL OR w.lease_until < ${at})
          ${only === undefined ? sql`` : sql`AND m.organisation_id = ${only.organisationId} AND m.id = ${only.messageId}`}
        ORDER BY m.updated_at LIMIT ${recoveryRoundMax}`

    const settleAll = (messages: ReadonlyArray<AbandonedMessage>) =>
      Effect.forEach(messages, (m) =>
        settlement.settle(m, m.maybeSent ? { _tag: "Unknown" } : { _tag: "NeverSent" }, "recovery"), {
        concurrency: "unbounded",
        discard: true
      })

    return Recovery.of({
      recoverAbandoned: Effect.fn("Recovery.recoverAbandoned")(function*(ownWorker: string) {
        const found = yield* abandoned(yield* now, ownWorker)
        yield* settleAll(found)
        if (found.length > 0) yield* Effect.logWarning("recovered messages of a dead process").pipe(Effect.annotateLogs({ count: found.length }))
        return found.length
      }),
      recoverMessage: Effect.fn("Recovery.recoverMessage")(function*(organisationId: string, messageId: string, ownWorker: string) {
        const found = yield* abandoned(yield* now, ownWorker, { organisationId, messageId })
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
