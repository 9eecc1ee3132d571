/**
 * The webhook receiver of docs/integrators.md (section "Webhooks"), as it is written there: the code block is
 * this folder's webhook-receiver.ts, character for character, and it receives and verifies (with
 * npm `standardwebhooks`) the events of a message sent through the in-process service.
 */
import { readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, withApp } from "../support/TestApp.ts"
import { createEndpoint, webhookPath, withWebhooks } from "../webhooks/support.ts"
import { makeReceiver, type StatusEvent } from "./webhook-receiver.ts"

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("the webhook receiver of docs/integrators.md", { timeout: 120_000 }, () => {
  withApp({ label: "webhook_readme", config: { clock: "test" } })((it) => {
    it("is the code docs/integrators.md shows", () => {
      const readme = readFileSync(join(import.meta.dirname, "../../docs/integrators.md"), "utf8")
      const file = readFileSync(join(import.meta.dirname, "webhook-receiver.ts"), "utf8")
      expect(readme).toContain(`\`\`\`ts\n${file}\`\`\``)
    })

    it.effect("receives a message's events, verified, once each", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 5, permissions: withWebhooks })
        const events: Array<StatusEvent> = []
        // the secret comes with the endpoint: create it, start the receiver with it, point the endpoint at it
        const endpoint = yield* createEndpoint(apiKey, {
          url: "http://127.0.0.1:9/sms-events",
          events: ["message.accepted", "message.delivered"]
        })
        const receiver = makeReceiver(endpoint.secret, (event) => events.push(event))
        yield* Effect.promise(() => new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve)))
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/sms-events`
        expect((yield* app.call("PATCH", webhookPath(endpoint.id), { token: apiKey, body: { url } })).status).toBe(200)

        const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
          token: apiKey,
          headers: { "idempotency-key": "readme-receiver-1" },
          body: { to: "+261340000001", text: "Salama" }
        })
        expect(sent.status, sent.text).toBe(201)
        yield* app.advance(app.config.simulatorReceiptDelayMs + 1000)
        expect(events.map((e) => [e.type, e.data.id, e.data.status])).toEqual([
          ["message.accepted", sent.body.id, "accepted"],
          ["message.delivered", sent.body.id, "delivered"]
        ])
        yield* Effect.promise(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
      })
    )
  })
})
