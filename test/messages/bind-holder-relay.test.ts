/**
 * An immediate send that reaches a process without its route's bind (docs/decisions.md#fair-share-and-fleet-limits): it is
 * stored due now and left to the holders (src/messages/BindHolderRelay.ts). Here the process on standby
 * is the app's Messages over a provider that says another process holds every bind; the holder is
 * the app's own dispatch (WorkSteps.dispatchDue). What must hold: the creation answers once the
 * holder has submitted and settled it, with the provider's answer (201); the holder submitted it
 * once; its timeline says it was handed over (admitted `scheduled`, started by the dispatch).
 */
import { Context, Effect, Fiber, Layer } from "effect"
import { expect } from "@effect/vitest"
import { WorkSteps } from "../../src/dispatch/WorkSteps.ts"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Messages } from "../../src/messages/Messages.ts"
import { Provider } from "../../src/provider/Provider.ts"
import { bodyOf } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

/** Creates an immediate send through Messages of a process holding no bind (every number's route is another's). */
const createOnStandby = (orgId: string, key: string, c: { readonly to: string; readonly text: string }) =>
  Effect.gen(function* () {
    const provider = yield* Provider
    const standby = Provider.of({
      ...provider,
      sendable: () => ({ _tag: "ByPrefix", prefixes: [{ prefix: "", held: false }] })
    })
    const messages = yield* Layer.build(Layer.fresh(Messages.layer)).pipe(
      Effect.provideService(Provider, standby),
      Effect.map(Context.get(Messages)),
      Effect.scoped
    )
    const fingerprint = (yield* Idempotency).fingerprint("messages", bodyOf(c))
    return yield* messages.create(orgId, key, fingerprint, { ...c, senderName: undefined, segments: 1, sendAt: null })
  })

withApp({ label: "hand_over" })(`an immediate send on a process without the bind (${backend})`, (it) => {
  it.effect(
    "is handed to the holder through the database and answered with the provider's answer once the holder settled it",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 1 })
        let answered = false
        const created = yield* createOnStandby(orgId, "hand-over-1", { to: "+261340000001", text: "handed over" }).pipe(
          Effect.ensuring(Effect.sync(() => (answered = true))),
          Effect.forkChild
        )

        // the holder's dispatcher, run until the creation has its answer (bounded)
        let claimedByHolder = 0
        for (let round = 0; round < 200 && !answered; round++) {
          claimedByHolder += yield* Effect.flatMap(WorkSteps, (steps) => steps.dispatchDue)
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        }
        const { answer } = yield* Fiber.join(created)
        expect(answer.status).toBe(201)
        const body = answer.body as { id: string; status: string }
        expect(body.status).toBe("accepted")
        expect(claimedByHolder, "claimed by the holder's dispatch").toBe(1)
        expect(app.calls.submits.get(body.id), "submitted once").toBe(1)
        const steps = (yield* app.timeline(orgId, body.id)).map(
          (e) => `${e.fromStatus ?? ""}>${e.toStatus}@${e.source}`
        )
        expect(steps.slice(0, 3)).toEqual([
          ">scheduled@admission",
          "scheduled>processing@dispatch",
          "processing>accepted@provider"
        ])
      }),
    60_000
  )
})
