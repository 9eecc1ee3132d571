/**
 * Status webhooks (docs/decisions.md#webhooks) through crashes, on the suite's own PostgreSQL: service
 * processes started from src/main.ts (system clock, SMS_WEBHOOK_ALLOW_PRIVATE=true) under the
 * mixed load of the fault suite (immediate sends to every simulator number, scheduled messages,
 * batches, contacts), one organisation with an endpoint subscribed to every event type, its
 * receiver on 127.0.0.1 answering each event 50 ms late (so attempts are in flight at any
 * moment) and verifying every signature with npm `standardwebhooks`.
 *
 * 1. `kill -9` of the service while deliveries are in flight, then a new process on the same
 *    database: every event delivered.
 * 2. PostgreSQL stopped for 10 s while deliveries are in flight, the same process serving
 *    throughout: no event lost.
 *
 * "Every event delivered, none lost": each entry of a message into a status that emits an event
 * (its timeline, written by the statement that changes the status) has exactly one event, each
 * completed batch one `batch.completed`, each event its delivery `succeeded`, and the receiver
 * accepted each one at least once (an attempt cut by the fault is made again once its claim
 * runs out, 60 s later: those are the events delivered twice).
 */
import { describe, expect, it } from "vitest"
import { isRunning, serve } from "../support/ServedProcess.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import { eventually } from "../support/Eventually.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { drive, mixedOperation, perform, type Result } from "./support/Operations.ts"
import { atRest, statusCounts } from "./support/Outcomes.ts"
import { subscribedOrg } from "./support/Subscriptions.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { deliveredTwice, lostEvents, pendingDeliveries, readWebhookFacts, typeCounts } from "./support/WebhookFacts.ts"

const postgres = useThrowawayPostgres("faults-webhooks-crash")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const env = () => ({
  DATABASE_URL: postgres().url,
  SMS_WEBHOOK_ALLOW_PRIVATE: "true",
  SMS_SIMULATOR_RECEIPT_DELAY_MS: "1000",
  SMS_SIMULATOR_SLOW_MS: "1500",
  SMS_VERIFY_INTERVAL_MS: "1000"
})

/** Longest wait for every delivery once the fault is over: a claim cut by it runs out after 60 s. */
const deliveredWithinMs = 150_000

/** Waits until every message is at rest and no delivery is pending, then checks nothing was lost. */
const everyEventDelivered = async (org: { orgId: string; endpointId: string; receiver: WebhookReceiver }) => {
  const settled = await atRest(postgres().url, 120_000)
  await eventually(
    () => pendingDeliveries(postgres().url),
    (n) => n === 0,
    { timeoutMs: deliveredWithinMs, intervalMs: 500, what: "every delivery done" }
  )
  const facts = await readWebhookFacts(postgres().url)
  expect(lostEvents(facts, [org]), "events lost").toEqual([])
  // the figures of this test's organisation (the file's database holds the other test's too)
  return {
    settled: { messages: settled.messages.filter((m) => m.organisationId === org.orgId) },
    facts: { ...facts, events: facts.events.filter((e) => e.organisationId === org.orgId) }
  }
}

describe("status webhooks through crashes", () => {
  it("kill -9 of the service in the middle of deliveries, then a restart: every event delivered", async () => {
    const first = await serve(env())
    const receiver = await startWebhookReceiver({ delayMs: 50 })
    const org = await subscribedOrg(first, receiver, 100_000)

    const results: Array<Result> = []
    let killedAt = 0
    let inFlightAtKill = 0
    const run = `wh-kill9-${Date.now()}`
    const killWhenDue = setInterval(() => {
      if (killedAt === 0 && receiver.events.size >= 500 && receiver.open() > 0) {
        inFlightAtKill = receiver.open()
        first.started.child.kill("SIGKILL")
        killedAt = Date.now()
      }
    }, 5)
    const loadStart = Date.now()
    await drive({
      count: 5000,
      make: (i) => mixedOperation(run, i, Date.now()),
      send: (op) => perform(first, org.apiKey, op),
      clients: 8,
      results,
      stop: () => killedAt !== 0
    })
    clearInterval(killWhenDue)
    expect(killedAt, "the process was killed while deliveries were in flight").toBeGreaterThan(0)
    expect(await first.started.exited, "killed by a signal").toBeNull()
    const receivedAtKill = receiver.events.size

    const second = await serve(env())
    const { settled, facts } = await everyEventDelivered(org)
    const deliveredAfterKill = Date.now() - killedAt
    expect(isRunning(second.started)).toBe(true)
    expect(facts.events.length, "events after the kill").toBeGreaterThan(receivedAtKill)

    printFigures("webhooks-kill9", {
      requests: results.length,
      kill_after_s: seconds(killedAt - loadStart),
      events: facts.events.length,
      received_before_kill: receivedAtKill,
      attempts_in_flight_at_kill: inFlightAtKill,
      all_delivered_after_kill_s: seconds(deliveredAfterKill),
      delivered_twice: deliveredTwice(receiver),
      types: typeCounts(receiver),
      messages: statusCounts(settled.messages)
    })
  })

  it("PostgreSQL stopped for 10 s in the middle of deliveries: no event lost", async () => {
    const served = await serve(env())
    const receiver = await startWebhookReceiver({ delayMs: 50 })
    const org = await subscribedOrg(served, receiver, 100_000)
    const pid = served.started.child.pid

    const results: Array<Result> = []
    let stopping = false
    const run = `wh-outage-${Date.now()}`
    const load = drive({
      count: Number.POSITIVE_INFINITY,
      make: (i) => mixedOperation(run, i, Date.now()),
      send: async (op) => {
        const result = await perform(served, org.apiKey, op)
        await sleep(20)
        return result
      },
      clients: 8,
      results,
      stop: () => stopping
    })
    await eventually(
      async () => receiver.events.size >= 300 && receiver.open() > 0,
      (ready) => ready,
      {
        timeoutMs: 60_000,
        intervalMs: 5,
        what: "deliveries in flight"
      }
    )
    const inFlightAtStop = receiver.open()
    const stoppedAt = Date.now()
    await postgres().stop()
    const down = Date.now()
    await sleep(10_000)
    const upAt = Date.now()
    await postgres().start()
    await sleep(3_000)
    stopping = true
    await load

    const { settled, facts } = await everyEventDelivered(org)
    expect(isRunning(served.started) && served.started.child.pid === pid, "the same process served throughout").toBe(
      true
    )
    const answeredWhileDown = results.filter((r) => r.sentAt >= down && r.answeredAt <= upAt)
    expect(answeredWhileDown.length, "requests answered while the database was down").toBeGreaterThan(0)

    printFigures("webhooks-postgres-outage", {
      requests: results.length,
      down_s: seconds(upAt - down),
      stop_took_s: seconds(down - stoppedAt),
      attempts_in_flight_at_stop: inFlightAtStop,
      events: facts.events.length,
      all_delivered_after_start_s: seconds(Date.now() - upAt),
      delivered_twice: deliveredTwice(receiver),
      types: typeCounts(receiver),
      messages: statusCounts(settled.messages)
    })
  })
})
