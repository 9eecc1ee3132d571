/**
 * A due message claimed by a process that then died stays claimed until its lease runs out
 * (`claimLeaseMs`); the test clock steps to that instant at once (`nextClaimable`), then the
 * message is dispatched, once.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { claimLeaseMs, MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import { testNumbers } from "../../src/provider/simulator/Simulator.ts"
import { create, statusOf } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const nextClaimable = (at: number) => Effect.flatMap(MessageQueueStore, (q) => q.nextClaimable(new Date(at))).pipe(Effect.map((d) => d?.getTime()))

withApp({ label: "dead_claim", config: { clock: "test" } })(`a dead process's claim on the test clock (${backend})`, (it) => {
  it.effect("is waited out in one step: the message is claimable a millisecond after its lease, then sent once", () =>
    Effect.gen(function*() {
      const app = yield* App
      const { apiKey } = yield* app.newOrg({ credits: 1 })
      const dueAt = (yield* app.now) + 60_000
      const { id, reply } = yield* create(apiKey, { to: testNumbers.delivered, text: "claimed by the dead", sendAt: dueAt })
      expect(reply.status, reply.text).toBe(202)
      expect(yield* nextClaimable(yield* app.now), "before it is due: its due time").toBe(dueAt)

      yield* app.moveClock(dueAt - (yield* app.now))
      const claimed = yield* Effect.flatMap(MessageQueueStore, (q) => q.claimDue(new Date(dueAt), 10, randomUUID(), { _tag: "All" }))
      expect(claimed.map((m) => m.id)).toEqual([id])
      expect(yield* nextClaimable(dueAt), "claimed: when the claim has run out").toBe(dueAt + claimLeaseMs + 1)
      expect(yield* nextClaimable(dueAt + claimLeaseMs + 1), "run out: due now").toBe(dueAt)

      yield* app.advance(claimLeaseMs + 5_000)
      expect(app.calls.submits.get(id)).toBe(1)
      expect(yield* statusOf(apiKey, id)).toBe("delivered")
    }), 60_000)
})
