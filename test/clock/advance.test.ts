/**
 * The test clock's advance (src/dispatch/DueWork.ts, docs/decisions.md#the-test-clock) with work that is due but
 * that no step can take yet: webhook deliveries of an endpoint whose eight places are held by the
 * claims of a process that died. The advance steps over them to its target, which it reaches
 * exactly and never passes, rather than moving a millisecond a pass while they stay due; the
 * claims' end is an instant it stops at, where the held deliveries are attempted.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { perEndpointInFlightMax } from "../../src/webhooks/Deliveries.ts"
import { App, withApp } from "../support/TestApp.ts"
import { createEndpoint, newKey, type Receiver, startReceiver, withWebhooks } from "../webhooks/support.ts"

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

/** How long the dead process's claims run on after the clock's now. */
const heldForMs = 60_000

describe("the test clock's advance", { timeout: 120_000 }, () => {
  withApp({ label: "advance", config: { clock: "test" } })((it) => {
    it.effect("reaches its target exactly past due work it cannot take, and stops where that work is freed", () =>
      Effect.gen(function* () {
        const app = yield* App
        const sql = yield* SqlClient.SqlClient
        const { apiKey, orgId } = yield* app.newOrg({ credits: 20, permissions: withWebhooks })
        yield* createEndpoint(apiKey, { url: receiver.url, events: ["message.accepted"] })
        const count = perEndpointInFlightMax + 1
        for (let i = 0; i < count; i++) {
          const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
            token: apiKey,
            headers: { "idempotency-key": newKey() },
            body: { to: "+261340000001", text: "Salama" }
          })
          expect(sent.status, sent.text).toBe(201)
        }
        // a process that died holds as many of the deliveries as the endpoint may have in flight:
        // the last one is due, and no claim may take it until theirs run out
        const start = yield* app.now
        const heldUntil = new Date(start + heldForMs)
        const held = yield* sql`UPDATE webhook_deliveries SET claim_until = ${heldUntil}
          WHERE (organisation_id, endpoint_id, event_id) IN (
            SELECT organisation_id, endpoint_id, event_id FROM webhook_deliveries
            WHERE organisation_id = ${orgId} AND state = 'pending' ORDER BY next_attempt_at LIMIT ${perEndpointInFlightMax})
          RETURNING event_id`
        expect(held).toHaveLength(perEndpointInFlightMax)
        receiver.received.length = 0

        yield* app.advance(10_000)
        expect(yield* app.now, "the clock at the target, not past it").toBe(start + 10_000)
        expect(receiver.received, "the endpoint's places are all held").toHaveLength(0)

        // the claims run out before the target: the advance stops there and attempts all of them
        yield* app.advanceTo(start + heldForMs + 5_000)
        expect(yield* app.now).toBe(start + heldForMs + 5_000)
        expect(receiver.received).toHaveLength(count)
        const attempts = yield* sql<{
          state: string
          attempted: Date
        }>`SELECT state, updated_at AS attempted FROM webhook_deliveries
          WHERE organisation_id = ${orgId}`
        expect(attempts.map((a) => [a.state, a.attempted.getTime()])).toEqual(
          Array.from({ length: count }, () => ["succeeded", heldUntil.getTime()])
        )
      })
    )
  })
})
