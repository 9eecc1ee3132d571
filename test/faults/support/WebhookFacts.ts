/**
 * What the database says about status webhooks after a fault, and the checks of "none lost":
 * every status change the messages went through (their timelines, written by the same statements
 * as the changes) against the outbox's events, and every event against what
 * the receiver accepted. Each check returns the list of what is wrong (empty when all holds).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { timelineEntriesSql } from "../../support/Timelines.ts"
import { finalStatuses } from "../../../src/domain/MessageStatus.ts"
import { webhookMessageStatuses } from "../../../src/domain/Webhooks.ts"
import type { WebhookReceiver } from "../../support/WebhookReceiver.ts"
import { withDatabase } from "./Outcomes.ts"

export interface WebhookFacts {
  /** Every event of the outbox (`evt_<uuid>`, as the header names it). */
  readonly events: ReadonlyArray<{
    readonly id: string
    readonly organisationId: string
    readonly type: string
    readonly messageId: string | null
    readonly batchId: string | null
  }>
  readonly deliveries: ReadonlyArray<{
    readonly endpointId: string
    readonly eventId: string
    readonly state: string
    readonly attempts: number
    readonly lastError: string | null
  }>
  /** Every entry of a message into a status that emits an event, from the timelines. */
  readonly transitions: ReadonlyArray<{
    readonly organisationId: string
    readonly messageId: string
    readonly status: string
  }>
  /** Batches whose every member is final. */
  readonly completedBatches: ReadonlyArray<{ readonly organisationId: string; readonly batchId: string }>
}

export const readWebhookFacts = (url: string): Promise<WebhookFacts> =>
  withDatabase(
    url,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const events = yield* sql<WebhookFacts["events"][number]>`SELECT 'evt_' || id AS id, organisation_id::text, type,
        message_id::text, batch_id::text FROM webhook_events`
      const deliveries = yield* sql<
        WebhookFacts["deliveries"][number]
      >`SELECT endpoint_id::text, 'evt_' || event_id AS event_id,
        state, attempts, last_error FROM webhook_deliveries`
      const transitions = yield* sql<
        WebhookFacts["transitions"][number]
      >`SELECT organisation_id::text, message_id::text,
        to_status AS status FROM (${sql.literal(timelineEntriesSql)}) AS e WHERE to_status IN ${sql.in(webhookMessageStatuses)}`
      const completedBatches = yield* sql<
        WebhookFacts["completedBatches"][number]
      >`SELECT organisation_id::text, batch_id::text
        FROM messages WHERE batch_id IS NOT NULL GROUP BY organisation_id, batch_id
        HAVING bool_and(status IN ${sql.in(finalStatuses)})`
      return { events, deliveries, transitions, completedBatches }
    })
  )

/** How many deliveries are still pending. */
export const pendingDeliveries = async (url: string): Promise<number> =>
  withDatabase(
    url,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{
        n: number
      }>`SELECT count(*)::integer AS n FROM webhook_deliveries WHERE state = 'pending'`
      return row!.n
    })
  )

const countBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const a of items) counts.set(key(a), (counts.get(key(a)) ?? 0) + 1)
  return counts
}

/** The differences between two counts, as lines `key: expected n, found m`. */
const differences = (what: string, expected: Map<string, number>, found: Map<string, number>): Array<string> =>
  [...new Set([...expected.keys(), ...found.keys()])].flatMap((k) =>
    (expected.get(k) ?? 0) === (found.get(k) ?? 0)
      ? []
      : [`${what} ${k}: ${expected.get(k) ?? 0} expected, ${found.get(k) ?? 0} found`]
  )

/**
 * For the organisations `orgs`, each with one endpoint subscribed to every event type and its
 * receiver: every status change has its event and every event its change (one `message.<status>`
 * per entry into that status; one `batch.completed` per batch whose members are all final); every
 * event has a delivery to the endpoint, `succeeded`; the receiver accepted every event (at least
 * once, its signature verified) and nothing else; the data of each event names its message and status.
 */
export const lostEvents = (
  facts: WebhookFacts,
  orgs: ReadonlyArray<{ readonly orgId: string; readonly endpointId: string; readonly receiver: WebhookReceiver }>
): Array<string> =>
  orgs.flatMap(({ orgId, endpointId, receiver }) => {
    const events = facts.events.filter((e) => e.organisationId === orgId)
    const messageEvents = events.filter((e) => e.messageId !== null)
    const changes = differences(
      "status change -> event",
      countBy(
        facts.transitions.filter((t) => t.organisationId === orgId),
        (t) => `${t.messageId} message.${t.status}`
      ),
      countBy(messageEvents, (e) => `${e.messageId} ${e.type}`)
    )
    const batches = differences(
      "completed batch -> batch.completed",
      countBy(
        facts.completedBatches.filter((b) => b.organisationId === orgId),
        (b) => b.batchId
      ),
      countBy(
        events.filter((e) => e.type === "batch.completed"),
        (e) => e.batchId ?? "?"
      )
    )
    const deliveries = new Map(facts.deliveries.filter((d) => d.endpointId === endpointId).map((d) => [d.eventId, d]))
    const undelivered = events.flatMap((e) => {
      const d = deliveries.get(e.id)
      if (d === undefined) return [`${e.id} (${e.type}) has no delivery`]
      return d.state === "succeeded"
        ? []
        : [`${e.id} (${e.type}) is ${d.state} after ${d.attempts} attempts: ${d.lastError}`]
    })
    const ids = new Set(events.map((e) => e.id))
    const notReceived = events
      .filter((e) => !receiver.events.has(e.id))
      .map((e) => `${e.id} (${e.type}) never received`)
    const unknown = [...receiver.events.keys()]
      .filter((id) => !ids.has(id))
      .map((id) => `${id} received but not in the outbox`)
    const byId = new Map(events.map((e) => [e.id, e]))
    const wrongData = [...receiver.events.values()].flatMap((r) => {
      const e = byId.get(r.id)
      if (e === undefined || e.messageId === null) return []
      return r.data?.id === e.messageId && `message.${r.data?.status}` === e.type
        ? []
        : [`${r.id} (${e.type}) carries ${JSON.stringify(r.data)}`]
    })
    const problems = [
      ...changes,
      ...batches,
      ...undelivered,
      ...notReceived,
      ...unknown,
      ...wrongData,
      ...receiver.rejected.map((r) => `refused by the receiver: ${r}`)
    ]
    // a long list says the same thing many times: the first ones and how many
    return problems.length > 20 ? [...problems.slice(0, 20), `... ${problems.length} problems in all`] : problems
  })

/** Events accepted more than once (a redelivery after a fault: allowed, counted). */
export const deliveredTwice = (receiver: WebhookReceiver): number =>
  [...receiver.events.values()].filter((e) => e.deliveries > 1).length

/** The events of each type the receiver accepted. */
export const typeCounts = (receiver: WebhookReceiver): Record<string, number> =>
  Object.fromEntries(countBy([...receiver.events.values()], (e) => e.type))
