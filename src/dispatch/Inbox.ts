/**
 * The service's side of `ProviderInbox`: what providers report is committed before they are told
 * it was received. Receipts and late answers arriving together are stored as one set (group
 * commit); a repeated receipt or late answer is stored once. Receipts are applied later by
 * Receipts.ts; a late answer makes its `unknown` message due for verification at once.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeGroupCommit } from "../db/GroupCommit.ts"
import { InboxUnavailable, type IncomingReceipt, type LateResult, ProviderInbox } from "../provider/Provider.ts"
import { now } from "../Time.ts"
import { Receipts } from "./Receipts.ts"

/** Most receipts (or late answers) stored in one statement. */
export const inboxSetSizeMax = 500

export const InboxLive = Layer.effect(ProviderInbox, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const receipts = yield* Receipts

  const storeReceipts = yield* makeGroupCommit({
    name: "receipt inbox",
    maxSize: inboxSetSizeMax,
    runSet: (items: ReadonlyArray<IncomingReceipt>) =>
      Effect.gen(function*() {
        const at = yield* now
        const rows = items.map((r) => ({ provider_ref: r.providerRef, outcome: r.outcome, occurred_at: r.occurredAt.toISOString() }))
        yield* sql`INSERT INTO provider_receipts (provider_ref, outcome, occurred_at, received_at, next_attempt_at)
          SELECT provider_ref, outcome, occurred_at, ${at}, ${at}
          FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(provider_ref text, outcome text, occurred_at timestamptz)
          ON CONFLICT (provider_ref, outcome) DO NOTHING`
        yield* receipts.wake
        return items.map(() => undefined)
      })
  })

  const storeLateResults = yield* makeGroupCommit({
    name: "late answer inbox",
    maxSize: inboxSetSizeMax,
    runSet: (items: ReadonlyArray<LateResult>) =>
      Effect.gen(function*() {
        const at = yield* now
        const rows = items.map((r) => ({
          organisation_id: r.organisationId,
          message_id: r.messageId,
          result: r.result._tag === "Accepted" ? "accepted" : "rejected",
          provider_ref: r.result._tag === "Accepted" ? r.result.providerRef : null,
          reason: r.result._tag === "Rejected" ? r.result.reason : null
        }))
        yield* sql`WITH x AS (
            SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
              AS x(organisation_id uuid, message_id uuid, result text, provider_ref text, reason text)),
          stored AS (
            INSERT INTO provider_evidence (organisation_id, message_id, result, provider_ref, reason, received_at)
            SELECT organisation_id, message_id, result, provider_ref, reason, ${at} FROM x
            ON CONFLICT DO NOTHING)
          UPDATE messages AS m SET verify_at = ${at}
          FROM x WHERE m.organisation_id = x.organisation_id AND m.id = x.message_id AND m.status = 'unknown'`
        return items.map(() => undefined)
      })
  })

  const unavailable = (cause: unknown) => new InboxUnavailable({ cause })
  return ProviderInbox.of({
    receipt: (r) => storeReceipts(r).pipe(Effect.mapError(unavailable)),
    lateResult: (r) => storeLateResults(r).pipe(Effect.mapError(unavailable))
  })
}))
