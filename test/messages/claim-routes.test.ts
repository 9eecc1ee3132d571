/**
 * The dispatcher claims only messages this process can submit (docs/decisions.md#fair-share-and-fleet-limits): with the
 * binds of some routes held by other processes, `claimDue` takes the numbers whose route (the
 * longest matching prefix, `""` for `*`) is held here, and a number no prefix serves (it fails at
 * once, whoever takes it); the others stay for their routes' holders.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import type { Sendable } from "../../src/provider/Provider.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const claim = (at: Date, sendable: Sendable) =>
  Effect.flatMap(MessageQueueStore, (q) => q.claimDue(at, 100, randomUUID(), sendable, false)).pipe(
    Effect.map((rows) => rows.map((m) => m.toNumber).sort())
  )

withApp({ label: "claim_routes" })(`claims by the routes whose binds this process holds (${backend})`, (it) => {
  it.effect(
    "takes the numbers of held routes by their longest prefix, leaves the others to their holders",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 4 })
        const sendAt = new Date((yield* app.now) + 3_600_000).toISOString()
        const numbers = ["+261341111111", "+261349999999", "+261331111111", "+261321111111"]
        for (const to of numbers) {
          const reply = yield* app.call("POST", "/api/sms/v2/messages/", {
            token: apiKey,
            headers: { "idempotency-key": `claim-routes-${to}` },
            body: { to, text: "claimed by route", send_at: sendAt }
          })
          expect(reply.status, reply.text).toBe(202)
        }
        const at = new Date((yield* app.now) + 7_200_000)
        // telma (+26134) is another process's, except its +2613499 numbers (a longer prefix, held here); airtel (+26133) is held here; +26132 matches no prefix
        const sendable: Sendable = {
          _tag: "ByPrefix",
          prefixes: [
            { prefix: "+2613499", held: true },
            { prefix: "+26134", held: false },
            { prefix: "+26133", held: true }
          ]
        }
        expect(yield* claim(at, sendable)).toEqual(["+261321111111", "+261331111111", "+261349999999"])
        expect(
          yield* claim(at, { _tag: "ByPrefix", prefixes: [{ prefix: "", held: false }] }),
          "every route another's"
        ).toEqual([])
        expect(yield* claim(at, { _tag: "All" }), "the holder of telma").toEqual(["+261341111111"])
      }),
    60_000
  )
})
