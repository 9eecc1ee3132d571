/**
 * `delivery_time` is the time the receipt reported the final delivery outcome (delivered or
 * undeliverable), null for every other status: an undeliverable message carries it, a failed,
 * blocked, unknown or still accepted one does not.
 */
import { Effect } from "effect"
import { expect } from "@effect/vitest"
import { create, messagesPath } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const receiptDelayMs = 2_000

withApp({ label: "delivery_time", config: { clock: "test", simulatorReceiptDelayMs: receiptDelayMs } })(
  `delivery_time (${backend})`,
  (it) => {
    it.effect("is the receipt's time for delivered and undeliverable messages, null for every other status", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 20 })
        const read = (id: string) =>
          Effect.map(app.call("GET", `${messagesPath}${id}/`, { token: apiKey }), (r) => r.body)
        const sentAt = yield* app.now
        // delivered, undeliverable, failed (rejected), unknown for good, accepted with no receipt ever
        const numbers = ["+261340000001", "+261340000002", "+261340000003", "+261340000009", "+261340000006"]
        const ids: Array<string> = []
        for (const to of numbers) ids.push((yield* create(apiKey, { to, text: "Salama" })).id)
        for (const id of ids) expect((yield* read(id)).delivery_time, "before any receipt").toBeNull()

        yield* app.advance(receiptDelayMs + 1_000)
        const [delivered, undeliverable, failed, unknown, accepted] = yield* Effect.forEach(ids, read)
        expect([delivered, undeliverable, failed, unknown, accepted].map((m) => m.status)).toEqual([
          "delivered",
          "undeliverable",
          "failed",
          "unknown",
          "accepted"
        ])
        for (const m of [delivered, undeliverable]) {
          // the receipt came one receipt delay after the acceptance, on the service's clock
          expect(Date.parse(m.delivery_time), m.status).toBeGreaterThanOrEqual(sentAt + receiptDelayMs)
          expect(Date.parse(m.delivery_time), m.status).toBeLessThanOrEqual(yield* app.now)
        }
        for (const m of [failed, unknown, accepted]) expect(m.delivery_time, m.status).toBeNull()
      })
    )
  }
)
