/**
 * The tables of status webhooks (`webhook_endpoints`, `webhook_events`, `webhook_deliveries`),
 * owned here. The outbox is written by the statements that change a message's status: they
 * compose `webhookOutbox` (below), so that an event exists exactly when its change does.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import { inTransaction } from "../db/Transactions.ts"
import type { ListPosition } from "../domain/NewestFirst.ts"
import { webhookMessageStatuses } from "../domain/Webhooks.ts"

export interface EndpointRow {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly description: string | null
  readonly enabled: boolean
  readonly createdAt: Date
}

export interface EnabledEndpoint {
  readonly organisationId: string
  readonly id: string
  readonly url: string
}

export interface NewEndpoint extends EndpointRow {
  readonly secret: string
}

export interface EndpointChanges {
  readonly url?: string
  readonly events?: ReadonlyArray<string>
  readonly description?: string | null
  readonly enabled?: boolean
}

export type DeliveryState = "pending" | "succeeded" | "failed"

/** One line of an endpoint's delivery log. */
export interface DeliveryRow {
  readonly eventId: string
  readonly type: string
  readonly state: DeliveryState
  readonly attempts: number
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly nextAttemptAt: Date | null
  readonly createdAt: Date
}

/** A delivery a process holds for one attempt, with what the attempt needs. */
export interface ClaimedDelivery {
  readonly organisationId: string
  readonly endpointId: string
  readonly eventId: string
  readonly attempts: number
  readonly url: string
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretUntil: Date | null
  readonly type: string
  readonly occurredAt: Date
  readonly messageId: string | null
  readonly batchId: string | null
  /** The message as it was at the transition, in the columns its representation reads. */
  readonly message: unknown
}

/** What an attempt came to: the delivery's next state. */
export interface AttemptRecord {
  readonly organisationId: string
  readonly endpointId: string
  readonly eventId: string
  readonly state: DeliveryState
  readonly statusCode: number | null
  readonly error: string | null
  readonly nextAttemptAt: Date | null
  /** A 410: the endpoint is disabled. */
  readonly disable: boolean
}

const endpointColumns = "id::text, url, events, description, enabled, created_at"
const deliveryColumns = `d.event_id::text, e.type, d.state, d.attempts, d.last_status_code, d.last_error,
  d.next_attempt_at, d.created_at`

export class WebhookStore extends Context.Service<
  WebhookStore,
  {
    /** Serialises the endpoint creations of an organisation until the transaction ends; returns how many it has. */
    readonly lockAndCount: (organisationId: string) => Fails<number>
    readonly insert: (organisationId: string, endpoint: NewEndpoint) => Fails<void>
    /** The organisation's endpoints, newest first. */
    readonly list: (organisationId: string) => Fails<ReadonlyArray<EndpointRow>>
    /** Every enabled endpoint of every organisation: its id, organisation and URL. */
    readonly enabledEndpoints: Fails<ReadonlyArray<EnabledEndpoint>>
    readonly find: (organisationId: string, id: string) => Fails<EndpointRow | undefined>
    /** Applies the changes present; undefined when there is no such endpoint. */
    readonly update: (
      organisationId: string,
      id: string,
      changes: EndpointChanges,
      at: Date
    ) => Fails<EndpointRow | undefined>
    /** Deletes the endpoint with its deliveries; false when there is none. */
    readonly remove: (organisationId: string, id: string) => Fails<boolean>
    /** Makes `secret` the signing secret, the current one signing beside it until `previousUntil`; false when there is no endpoint. */
    readonly rotate: (
      organisationId: string,
      id: string,
      secret: string,
      previousUntil: Date,
      at: Date
    ) => Fails<boolean>
    /** At most `limit + 1` lines of the endpoint's delivery log, newest first, after `after`. */
    readonly deliveries: (
      organisationId: string,
      endpointId: string,
      limit: number,
      after: ListPosition | undefined
    ) => Fails<ReadonlyArray<DeliveryRow>>
    /** Makes the delivery due now, whatever its state; false when there is none. */
    readonly retryNow: (organisationId: string, endpointId: string, eventId: string, at: Date) => Fails<boolean>
    /** Writes a `webhook.test` event for this endpoint alone, due now. */
    readonly insertTest: (organisationId: string, endpointId: string, eventId: string, at: Date) => Fails<void>
    /**
     * Claims up to `limit` due deliveries of enabled endpoints until `until`, never more than
     * `perEndpointMax` held at once per endpoint, skipping what other processes hold.
     */
    readonly claimDue: (
      at: Date,
      until: Date,
      limit: number,
      perEndpointMax: number
    ) => Fails<ReadonlyArray<ClaimedDelivery>>
    /** Records attempts' results and lets their claims go. */
    readonly record: (records: ReadonlyArray<AttemptRecord>, at: Date) => Fails<void>
    /**
     * The earliest instant after `after` at which a pending delivery of an enabled endpoint may be
     * claimed: the next one to fall due, or the end of a claim on a due one (one due by `after`
     * and not claimed is not counted: the test clock asks once the claims took what they could).
     */
    readonly nextDue: (after: Date) => Fails<Date | undefined>
    /** How long the oldest due delivery has waited, in seconds (0 without one). */
    readonly backlogOldestAgeSeconds: (at: Date) => Fails<number>
  }
>()("sms/WebhookStore") {
  static readonly layer = Layer.effect(
    WebhookStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient

      return WebhookStore.of({
        lockAndCount: (organisationId) =>
          fromDatabase(
            Effect.gen(function* () {
              yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`webhook_endpoints:${organisationId}`}))`
              const [row] = yield* sql<{
                n: number
              }>`SELECT count(*)::integer AS n FROM webhook_endpoints WHERE organisation_id = ${organisationId}`
              return row?.n ?? 0
            })
          ),
        insert: (organisationId, e) =>
          fromDatabase(
            sql`INSERT INTO webhook_endpoints (organisation_id, id, url, events, description, enabled, secret, created_at, updated_at)
          VALUES (${organisationId}, ${e.id}, ${e.url}, ${e.events}::text[], ${e.description}, ${e.enabled}, ${e.secret}, ${e.createdAt}, ${e.createdAt})`.pipe(
              Effect.asVoid
            )
          ),
        list: (organisationId) =>
          fromDatabase(sql<EndpointRow>`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints
          WHERE organisation_id = ${organisationId} ORDER BY created_at DESC, id DESC`),
        enabledEndpoints: fromDatabase(sql<EnabledEndpoint>`SELECT organisation_id::text, id::text, url
          FROM webhook_endpoints WHERE enabled ORDER BY organisation_id, created_at`),
        find: (organisationId, id) =>
          fromDatabase(
            sql<EndpointRow>`SELECT ${sql.literal(endpointColumns)} FROM webhook_endpoints
          WHERE organisation_id = ${organisationId} AND id = ${id}`.pipe(Effect.map((rows) => rows[0]))
          ),
        update: (organisationId, id, c, at) =>
          fromDatabase(
            sql<EndpointRow>`UPDATE webhook_endpoints SET
            url = ${c.url === undefined ? sql`url` : sql`${c.url}`},
            events = ${c.events === undefined ? sql`events` : sql`${c.events}::text[]`},
            description = ${c.description === undefined ? sql`description` : sql`${c.description}::text`},
            enabled = ${c.enabled === undefined ? sql`enabled` : sql`${c.enabled}`},
            updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND id = ${id}
          RETURNING ${sql.literal(endpointColumns)}`.pipe(Effect.map((rows) => rows[0]))
          ),
        remove: (organisationId, id) =>
          fromDatabase(
            sql`DELETE FROM webhook_endpoints WHERE organisation_id = ${organisationId} AND id = ${id} RETURNING id`.pipe(
              Effect.map((rows) => rows.length > 0)
            )
          ),
        rotate: (organisationId, id, secret, previousUntil, at) =>
          fromDatabase(
            sql`UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ${previousUntil},
            secret = ${secret}, updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND id = ${id} RETURNING id`.pipe(
              Effect.map((rows) => rows.length > 0)
            )
          ),
        deliveries: (organisationId, endpointId, limit, after) =>
          fromDatabase(sql<DeliveryRow>`SELECT ${sql.literal(deliveryColumns)}
          FROM webhook_deliveries AS d JOIN webhook_events AS e ON e.organisation_id = d.organisation_id AND e.id = d.event_id
          WHERE d.organisation_id = ${organisationId} AND d.endpoint_id = ${endpointId}
            ${after === undefined ? sql`` : sql`AND (d.created_at, d.event_id) < (${after.createdAt}, ${after.id}::uuid)`}
          ORDER BY d.created_at DESC, d.event_id DESC LIMIT ${limit + 1}`),
        retryNow: (organisationId, endpointId, eventId, at) =>
          fromDatabase(
            sql`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ${at}, updated_at = ${at}
          WHERE organisation_id = ${organisationId} AND endpoint_id = ${endpointId} AND event_id = ${eventId}
          RETURNING event_id`.pipe(Effect.map((rows) => rows.length > 0))
          ),
        insertTest: (organisationId, endpointId, eventId, at) =>
          fromDatabase(
            sql`WITH e AS (
            INSERT INTO webhook_events (organisation_id, id, type, occurred_at) VALUES (${organisationId}, ${eventId}, 'webhook.test', ${at})
            RETURNING organisation_id, id)
          INSERT INTO webhook_deliveries (organisation_id, endpoint_id, event_id, state, next_attempt_at, created_at, updated_at)
          SELECT organisation_id, ${endpointId}, id, 'pending', ${at}, ${at}, ${at} FROM e`.pipe(Effect.asVoid)
          ),
        // Claims are serialised across processes (an advisory lock to the transaction's end, then
        // the statement, whose snapshot sees every claim committed before): two claims at once
        // would each count the other's attempts as not held and together pass an endpoint's cap.
        claimDue: (at, until, limit, perEndpointMax) =>
          fromDatabase(
            inTransaction(sql)(
              Effect.andThen(
                sql`SELECT pg_advisory_xact_lock(hashtext('webhook_deliveries:claim'))`,
                sql<ClaimedDelivery>`WITH held AS (
            SELECT organisation_id, endpoint_id, count(*) AS n FROM webhook_deliveries
            WHERE state = 'pending' AND claim_until > ${at} GROUP BY organisation_id, endpoint_id),
          room AS (
            SELECT ep.organisation_id, ep.id, ${perEndpointMax} - coalesce(h.n, 0) AS n FROM webhook_endpoints AS ep
            LEFT JOIN held AS h ON h.organisation_id = ep.organisation_id AND h.endpoint_id = ep.id
            WHERE ep.enabled AND coalesce(h.n, 0) < ${perEndpointMax}),
          -- each endpoint's earliest due deliveries, as many as it has room for: an endpoint whose
          -- backlog is older and larger than a claim never hides another's due deliveries
          due AS (
            SELECT c.* FROM room CROSS JOIN LATERAL (
              SELECT d.organisation_id, d.endpoint_id, d.event_id, d.next_attempt_at FROM webhook_deliveries AS d
              WHERE d.organisation_id = room.organisation_id AND d.endpoint_id = room.id
                AND d.state = 'pending' AND d.next_attempt_at <= ${at} AND (d.claim_until IS NULL OR d.claim_until <= ${at})
              ORDER BY d.next_attempt_at LIMIT room.n
              FOR UPDATE OF d SKIP LOCKED) AS c),
          chosen AS (SELECT * FROM due ORDER BY next_attempt_at LIMIT ${limit}),
          c AS (
            UPDATE webhook_deliveries AS d SET claim_until = ${until}
            FROM chosen WHERE d.organisation_id = chosen.organisation_id AND d.endpoint_id = chosen.endpoint_id
              AND d.event_id = chosen.event_id
            RETURNING d.organisation_id, d.endpoint_id, d.event_id, d.attempts)
          SELECT c.organisation_id::text, c.endpoint_id::text, c.event_id::text, c.attempts, ep.url, ep.secret,
            ep.previous_secret, ep.previous_secret_until, e.type, e.occurred_at, e.message_id::text, e.batch_id::text, e.message
          FROM c JOIN webhook_endpoints AS ep ON ep.organisation_id = c.organisation_id AND ep.id = c.endpoint_id
          JOIN webhook_events AS e ON e.organisation_id = c.organisation_id AND e.id = c.event_id`
              )
            )
          ),
        record: (records, at) => {
          if (records.length === 0) return Effect.void
          const rows = records.map((r) => ({
            organisation_id: r.organisationId,
            endpoint_id: r.endpointId,
            event_id: r.eventId,
            state: r.state,
            status_code: r.statusCode,
            error: r.error,
            next_attempt_at: r.nextAttemptAt?.toISOString() ?? null,
            disable: r.disable
          }))
          return fromDatabase(
            sql`WITH x AS (
            SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(organisation_id uuid, endpoint_id uuid,
              event_id uuid, state text, status_code integer, error text, next_attempt_at timestamptz, disable boolean)),
          d AS (
            UPDATE webhook_deliveries AS d SET state = x.state, attempts = d.attempts + 1, last_status_code = x.status_code,
              last_error = x.error, next_attempt_at = x.next_attempt_at, claim_until = NULL, updated_at = ${at}
            FROM x WHERE d.organisation_id = x.organisation_id AND d.endpoint_id = x.endpoint_id AND d.event_id = x.event_id)
          UPDATE webhook_endpoints AS ep SET enabled = false, updated_at = ${at}
          FROM x WHERE x.disable AND ep.organisation_id = x.organisation_id AND ep.id = x.endpoint_id`.pipe(
              Effect.asVoid
            )
          )
        },
        nextDue: (after) =>
          fromDatabase(
            sql<{
              at: Date | null
            }>`SELECT min(CASE WHEN d.next_attempt_at > ${after} THEN d.next_attempt_at ELSE d.claim_until END) AS at
          FROM webhook_deliveries AS d
          JOIN webhook_endpoints AS ep ON ep.organisation_id = d.organisation_id AND ep.id = d.endpoint_id AND ep.enabled
          WHERE d.state = 'pending' AND (d.next_attempt_at > ${after} OR d.claim_until > ${after})`.pipe(
              Effect.map(([row]) => row?.at ?? undefined)
            )
          ),
        backlogOldestAgeSeconds: (at) =>
          fromDatabase(
            sql<{
              age: number
            }>`SELECT greatest(coalesce(extract(epoch FROM ${at}::timestamptz - min(d.next_attempt_at)), 0), 0)::float8 AS age
          FROM webhook_deliveries AS d
          JOIN webhook_endpoints AS ep ON ep.organisation_id = d.organisation_id AND ep.id = d.endpoint_id AND ep.enabled
          WHERE d.state = 'pending' AND d.next_attempt_at <= ${at}`.pipe(Effect.map(([row]) => row?.age ?? 0))
          )
      })
    })
  )
}

/** Whether an enabled endpoint of the organisation `org` takes events of `type` (both SQL expressions), as SQL. */
export const webhookSubscribed = (org: string, type: string) =>
  `EXISTS (SELECT 1 FROM webhook_endpoints AS wep WHERE wep.organisation_id = ${org} AND wep.enabled AND ${type} = ANY(wep.events))`

const messageTypes = webhookMessageStatuses.map((s) => `'${s}'`).join(", ")

/**
 * The outbox as fragments of the statements that change statuses (messages/MessageStore.ts, MessageFragments.ts):
 * each writes an event, with one delivery per enabled endpoint subscribed to it, only when some
 * endpoint of the organisation is.
 */
export const webhookOutbox = (sql: SqlClient.SqlClient) => {
  const subscribed = webhookSubscribed
  const deliveries = (events: string) =>
    sql`INSERT INTO webhook_deliveries (organisation_id, endpoint_id, event_id, state, next_attempt_at, created_at, updated_at)
      SELECT we.organisation_id, wep.id, we.id, 'pending', we.occurred_at, we.occurred_at, we.occurred_at
      FROM ${sql(events)} AS we JOIN webhook_endpoints AS wep
        ON wep.organisation_id = we.organisation_id AND wep.enabled AND we.type = ANY(wep.events)`
  return {
    /**
     * The CTEs `wme` and `wmd`: an event `message.<status>` for each row of `moved` (a CTE of the
     * messages as they are after the change: `organisation_id, id, to_number, sender_name,
     * segments, status, send_at, delivery_time`, and `at`, the change's instant) whose status
     * emits one.
     */
    messageEvents: (moved: string): Statement.Fragment =>
      sql`wme AS (
          INSERT INTO webhook_events (organisation_id, id, type, occurred_at, message_id, message)
          SELECT mv.organisation_id, gen_random_uuid(), 'message.' || mv.status, mv.at, mv.id,
            jsonb_build_object('id', mv.id, 'toNumber', mv.to_number, 'senderName', mv.sender_name, 'status', mv.status,
              'segments', mv.segments, 'sendAt', mv.send_at, 'deliveryTime', mv.delivery_time)
          FROM ${sql(moved)} AS mv
          WHERE mv.status IN (${sql.literal(messageTypes)})
            AND ${sql.literal(subscribed("mv.organisation_id", "'message.' || mv.status"))}
          RETURNING organisation_id, id, type, occurred_at),
        wmd AS (${deliveries("wme")})`,
    /**
     * The CTE `wer`: the erasure of messages' personal data reaches their events' snapshots (the
     * recipient and sender blanked as the messages show them), for each row of the CTE `erased`
     * (the erased messages, `organisation_id` and `id` as text).
     */
    eraseMessages: (erased: string): Statement.Fragment =>
      sql`wer AS (
          UPDATE webhook_events AS w SET message = w.message || '{"toNumber": "", "senderName": ""}'::jsonb
          FROM ${sql(erased)} AS e
          WHERE w.organisation_id = e.organisation_id::uuid AND w.message_id = e.id::uuid AND w.message IS NOT NULL)`,
    /**
     * The CTEs `wbe` and `wbd`: one `batch.completed` event for each row of `completed` (a CTE of
     * `organisation_id, batch_id` whose last member reached a final status), once per batch.
     */
    batchEvents: (completed: string, at: Date): Statement.Fragment =>
      sql`wbe AS (
          INSERT INTO webhook_events (organisation_id, id, type, occurred_at, batch_id)
          SELECT bc.organisation_id, gen_random_uuid(), 'batch.completed', ${at}, bc.batch_id
          FROM ${sql(completed)} AS bc
          WHERE ${sql.literal(subscribed("bc.organisation_id", "'batch.completed'"))}
          ON CONFLICT (organisation_id, batch_id) WHERE type = 'batch.completed' DO NOTHING
          RETURNING organisation_id, id, type, occurred_at),
        wbd AS (${deliveries("wbe")})`
  }
}
