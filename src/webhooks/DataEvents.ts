/**
 * The outbox of events whose `data` is written with them (docs/two-way.md):
 * `message.received` (the inbound message) and `contact.opted_out` / `contact.opted_in`. Their
 * data is the representation itself, taken at the change, so a delivery sends it as it is
 * (http/WebhookPayloads.ts). Composed into the statement that makes the change, like the status
 * events of WebhookStore.ts.
 */
import type { SqlClient, Statement } from "effect/sql"
import { webhookSubscribed } from "./WebhookStore.ts"

/** The event types whose data is stored with them. */
export const dataEventTypes = ["message.received", "contact.opted_out", "contact.opted_in"] as const

/**
 * The CTEs `<name>e` and `<name>d`: an event of `type` for each row of the CTE `rows`
 * (`organisation_id uuid, data jsonb`), at `at`, with one delivery per enabled endpoint of its
 * organisation subscribed to it; nothing when none is.
 */
export const dataEvents = (
  sql: SqlClient.SqlClient,
  name: string,
  rows: string,
  type: (typeof dataEventTypes)[number],
  at: Date
): Statement.Fragment =>
  sql`${sql.literal(name)}e AS (
      INSERT INTO webhook_events (organisation_id, id, type, occurred_at, message)
      SELECT r.organisation_id, gen_random_uuid(), ${type}, ${at}, r.data
      FROM ${sql(rows)} AS r
      WHERE r.organisation_id IS NOT NULL AND ${sql.literal(webhookSubscribed("r.organisation_id", `'${type}'`))}
      RETURNING organisation_id, id, type, occurred_at),
    ${sql.literal(name)}d AS (
      INSERT INTO webhook_deliveries (organisation_id, endpoint_id, event_id, state, next_attempt_at, created_at, updated_at)
      SELECT we.organisation_id, wep.id, we.id, 'pending', we.occurred_at, we.occurred_at, we.occurred_at
      FROM ${sql.literal(name)}e AS we JOIN webhook_endpoints AS wep
        ON wep.organisation_id = we.organisation_id AND wep.enabled AND we.type = ANY(wep.events))`
