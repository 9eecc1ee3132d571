/**
 * Status webhooks (docs/decisions.md#webhooks), with a receiver in the bench process
 * (test/support/WebhookReceiver.ts: every signature verified with npm `standardwebhooks`, each
 * event answered 204 at once), subscribed to every event type of its organisation.
 *
 * - Scenario 14: a steady flow of messages falling due (scenario 8's flow rate and duration,
 *   seeded ahead), each one accepted then delivered (the zero-delay simulator's receipt), so two
 *   events a message: events per second received, and due -> event p99 (from the message's due
 *   time to its `message.accepted` received) beside the status change -> received p99 of all events.
 * - Scenario 15: scenario 6's drain (the same count, seeded due at once) of an organisation with
 *   such an endpoint: its messages/s against scenario 6 without webhooks, in the same run.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { startWebhookReceiver, type WebhookReceiver } from "../../test/support/WebhookReceiver.ts"
import type { BenchContext, OrgWithLot } from "../context.ts"
import { query } from "../psql.ts"
import type { Service } from "../service.ts"
import { percentile, round } from "../stats.ts"
import { type DrainFacts, seed, serviceDrain } from "./drain.ts"

export interface WebhookFlowFacts {
  readonly rate: number
  readonly durationS: number
  readonly messages: number
  readonly events: number
  /** Events received per second, from the first to the last received. */
  readonly eventsPerSec: number
  /** message.accepted received - the message's due time, ms. */
  readonly dueToEventP50Ms: number
  readonly dueToEventP99Ms: number
  /** Received - the event's timestamp (its status change), every event, ms. */
  readonly changeToEventP99Ms: number
  /** Events of the outbox not received by the end. */
  readonly missing: number
}

export interface WebhookDrainFacts {
  readonly drain: DrainFacts
  readonly events: number
  /** Events still not received when the drain ended (the deliveries catch up after it). */
  readonly behindAtDrainEnd: number
}

/** Creates `org`'s endpoint (every event type) at a new receiver; `apiKey` must hold webhooks.manage. */
export const subscribe = async (service: Service, apiKey: string): Promise<WebhookReceiver> => {
  const receiver = await startWebhookReceiver()
  const res = await fetch(`${service.base}/api/sms/v2/webhooks/`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${apiKey}`,
      "content-type": "application/json",
      "idempotency-key": `bench-endpoint-${Date.now()}`
    },
    body: JSON.stringify({ url: receiver.url, description: "bench receiver" })
  })
  const body = (await res.json()) as { secret?: string }
  if (res.status !== 201 || body.secret === undefined)
    throw new Error(`cannot create the bench endpoint: ${res.status} ${JSON.stringify(body)}`)
  receiver.secret = body.secret
  return receiver
}

const eventCount = async (url: string, org: OrgWithLot): Promise<number> =>
  Number((await query(url, `SELECT count(*) FROM webhook_events WHERE organisation_id = '${org.id}'`))[0]![0])

/** Waits (at most `timeoutS`) until the receiver has every event of the outbox. */
const caughtUp = async (url: string, org: OrgWithLot, receiver: WebhookReceiver, timeoutS: number) => {
  const deadline = Date.now() + timeoutS * 1000
  let events = await eventCount(url, org)
  while (Date.now() < deadline && receiver.events.size < events) {
    await sleep(250)
    events = await eventCount(url, org)
  }
  return events
}

export const webhookFlow = async (
  ctx: BenchContext,
  org: OrgWithLot,
  receiver: WebhookReceiver
): Promise<WebhookFlowFacts> => {
  const { flowRate, flowDurationS } = ctx.settings
  const count = flowRate * flowDurationS
  const { due } = await seed(ctx.url, org, count, 3, Math.round(1_000_000 / flowRate))
  await sleep(Math.max(0, Date.parse(due) + flowDurationS * 1000 - Date.now()))
  const events = await caughtUp(ctx.url, org, receiver, ctx.settings.drainTimeoutS)
  const dueAt = new Map(
    (
      await query(
        ctx.url,
        `SELECT id, extract(epoch FROM due_at) * 1000 FROM messages WHERE organisation_id = '${org.id}'`
      )
    ).map(([id, ms]) => [id!, Number(ms)])
  )
  const received = [...receiver.events.values()]
  const accepted = received.filter((e) => e.type === "message.accepted" && dueAt.has(e.data?.id))
  const dueToEvent = accepted.map((e) => e.receivedAt - dueAt.get(e.data.id)!)
  const times = received.map((e) => e.receivedAt)
  const spanS = (Math.max(...times) - Math.min(...times)) / 1000
  return {
    rate: flowRate,
    durationS: flowDurationS,
    messages: count,
    events,
    eventsPerSec: round(received.length / spanS, 1),
    dueToEventP50Ms: round(percentile(dueToEvent, 0.5), 0),
    dueToEventP99Ms: round(percentile(dueToEvent, 0.99), 0),
    changeToEventP99Ms: round(
      percentile(
        received.map((e) => e.receivedAt - e.occurredAt),
        0.99
      ),
      0
    ),
    missing: events - received.length
  }
}

export const webhookDrain = async (
  ctx: BenchContext,
  org: OrgWithLot,
  receiver: WebhookReceiver
): Promise<WebhookDrainFacts> => {
  const drain = await serviceDrain(ctx, org)
  const behind = (await eventCount(ctx.url, org)) - receiver.events.size
  const events = await caughtUp(ctx.url, org, receiver, ctx.settings.drainTimeoutS)
  return { drain, events, behindAtDrainEnd: behind }
}
