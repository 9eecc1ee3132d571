/**
 * A due message claimed by a process that then died stays claimed until its lease runs out
 * (`claimLeaseMs`); the test clock steps to that instant at once (`nextClaimable`), then the
 * message is dispatched, once. On the system clock, the dispatcher sleeps until the claim runs out
 * (at most its poll interval at a time) rather than claiming again every `busyRetryMs`: each of
 * its attempts asks the provider which routes it may send to, and those asks are counted.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { claimLeaseMs, MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { eventuallyEffect } from "../support/Eventually.ts"
import { create, statusOf } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const nextClaimable = (at: number) =>
  Effect.flatMap(MessageQueueStore, (q) => q.nextClaimable(new Date(at))).pipe(Effect.map((d) => d?.getTime()))

withApp({ label: "dead_claim", config: { clock: "test" } })(
  `a dead process's claim on the test clock (${backend})`,
  (it) => {
    it.effect(
      "is waited out in one step: the message is claimable a millisecond after its lease, then sent once",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: 1 })
          const dueAt = (yield* app.now) + 60_000
          const { id, reply } = yield* create(apiKey, {
            to: testNumbers.delivered,
            text: "claimed by the dead",
            sendAt: dueAt
          })
          expect(reply.status, reply.text).toBe(202)
          expect(yield* nextClaimable(yield* app.now), "before it is due: its due time").toBe(dueAt)

          yield* app.moveClock(dueAt - (yield* app.now))
          const claimed = yield* Effect.flatMap(MessageQueueStore, (q) =>
            q.claimDue(new Date(dueAt), 10, randomUUID(), { _tag: "All" }, false)
          )
          expect(claimed.map((m) => m.id)).toEqual([id])
          expect(yield* nextClaimable(dueAt), "claimed: when the claim has run out").toBe(dueAt + claimLeaseMs + 1)
          expect(yield* nextClaimable(dueAt + claimLeaseMs + 1), "run out: due now").toBe(dueAt)

          yield* app.advance(claimLeaseMs + 5_000)
          expect(app.calls.submits.get(id)).toBe(1)
          expect(yield* statusOf(apiKey, id)).toBe("delivered")
        }),
      60_000
    )
  }
)

withApp({ label: "dead_claim_live", config: { schedulerEnabled: true, simulatorReceiptDelayMs: 0 } })(
  `a dead process's claim on the system clock (${backend})`,
  (it) => {
    it.effect(
      "is waited out: the dispatcher does not claim again every 50 ms while it holds; the message is sent once after it",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const sql = yield* SqlClient.SqlClient
          const { apiKey } = yield* app.newOrg({ credits: 1 })
          const { id, reply } = yield* create(apiKey, {
            to: testNumbers.delivered,
            text: "claimed by the dead",
            sendAt: Date.now() + 3_600_000
          })
          expect(reply.status, reply.text).toBe(202)
          // due now, and claimed for 2.5 s more by a process that is gone
          yield* sql`UPDATE messages SET due_at = now() - interval '1 second', worker_id = ${randomUUID()},
          claim_until = now() + interval '2.5 seconds' WHERE id = ${id}`
          const before = app.calls.sendables
          yield* Effect.sleep(1_500)
          // two asks an attempt (its claim, then the sleep's length): a claim every 50 ms would be about 60
          expect(app.calls.sendables - before).toBeLessThanOrEqual(8)
          yield* eventuallyEffect(statusOf(apiKey, id), (status) => status === "delivered", {
            timeoutMs: 10_000,
            what: "delivered"
          })
          expect(app.calls.submits.get(id)).toBe(1)
        }),
      30_000
    )
  }
)
