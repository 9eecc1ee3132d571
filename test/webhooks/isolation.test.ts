/**
 * Webhook deliveries on the system clock, by the background loop (docs/decisions.md#webhooks): a
 * receiver that accepts connections and never answers holds at most 8 attempts of its endpoint in
 * flight, and meanwhile another organisation's healthy receiver gets its events. /metrics counts
 * the attempts. Polls with a bound; asserts no timing.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { perEndpointInFlightMax } from "../../src/webhooks/Deliveries.ts"
import { eventuallyEffect } from "../support/Eventually.ts"
import { adminToken, App, withApp } from "../support/TestApp.ts"
import { createEndpoint, type Receiver, startReceiver, webhookPath, withWebhooks } from "./support.ts"

let healthy: Receiver
let stuck: Server
let stuckUrl: string
const open = { now: 0, max: 0, total: 0 }
const held: Array<() => void> = []

beforeAll(async () => {
  healthy = await startReceiver(200)
  // answers nothing: each request stays open until the test ends (or the service gives up after 10 s)
  stuck = createServer((req, res) => {
    open.now++
    open.total++
    open.max = Math.max(open.max, open.now)
    req.on("close", () => void open.now--)
    held.push(() => res.destroy())
  })
  await new Promise<void>((resolve) => stuck.listen(0, "127.0.0.1", resolve))
  stuckUrl = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/hooks`
})
afterAll(async () => {
  await healthy.close()
  stuck.closeAllConnections()
  await new Promise<void>((resolve) => stuck.close(() => resolve()))
})

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("webhook isolation", { timeout: 120_000 }, () => {
  withApp({ label: "webhook_isolation" })((it) => {
    it.effect(
      "a receiver that never answers holds at most 8 attempts; another organisation's events still arrive",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const slow = yield* app.newOrg({ permissions: withWebhooks })
          const slowEndpoint = yield* createEndpoint(slow.apiKey, { url: stuckUrl })
          for (let i = 0; i < 3 * perEndpointInFlightMax; i++) {
            expect(
              (yield* app.call("POST", `${webhookPath(slowEndpoint.id)}test/`, { token: slow.apiKey })).status
            ).toBe(202)
          }
          yield* eventuallyEffect(
            Effect.sync(() => open.now),
            (n) => n === perEndpointInFlightMax,
            { timeoutMs: 20_000, what: "8 attempts open at the stuck receiver" }
          )

          const fine = yield* app.newOrg({ permissions: withWebhooks })
          const fineEndpoint = yield* createEndpoint(fine.apiKey, { url: healthy.url })
          for (let i = 0; i < 3; i++)
            yield* app.call("POST", `${webhookPath(fineEndpoint.id)}test/`, { token: fine.apiKey })
          yield* eventuallyEffect(
            Effect.sync(() => healthy.received.length),
            (n) => n === 3,
            { timeoutMs: 20_000, what: "the healthy receiver's 3 events" }
          )
          // the stuck endpoint still holds no more than its share
          expect(open.max).toBe(perEndpointInFlightMax)
          expect(open.now).toBeLessThanOrEqual(perEndpointInFlightMax)

          // the receiver has the request before the service has its answer recorded: poll the log
          const states = yield* eventuallyEffect(
            Effect.gen(function* () {
              const log = yield* app.call("GET", `${webhookPath(fineEndpoint.id)}deliveries/`, { token: fine.apiKey })
              return log.body.results.map((d: { state: string }) => d.state)
            }),
            (s) => s.length === 3 && s.every((state: string) => state === "succeeded"),
            { timeoutMs: 20_000, what: "the healthy endpoint's 3 deliveries recorded as succeeded" }
          )
          expect(states).toEqual(["succeeded", "succeeded", "succeeded"])
          const metrics = yield* app.call("GET", "/metrics", { token: adminToken, headers: { accept: "text/plain" } })
          const succeeded = /^sms_webhook_attempts_total\{outcome="succeeded"\} (\d+)/m.exec(metrics.text)
          expect(Number(succeeded?.[1])).toBeGreaterThanOrEqual(3)
          expect(metrics.text).toMatch(/^sms_webhook_backlog_oldest_age_seconds \S+$/m)
        })
    )
  })
  // before the app is disposed (the last afterAll registered runs first): the held requests end
  afterAll(() => {
    for (const release of held) release()
  })
})
