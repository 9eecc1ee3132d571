/**
 * The test clock through the operator API (docs/decisions.md#the-test-clock): GET /admin/v1/clock, POST
 * /admin/v1/clock/advance. An advance answers once the work due by the new time is done, so
 * these tests schedule, advance and assert, with no sleep: scheduled messages and batches fire,
 * receipts arrive after the simulator's delay in clock time, credits expire at the end of their
 * day. Without SMS_CLOCK=test the clock can be read but not advanced.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { batchesPath, batchPath } from "../batches/support.ts"
import { balancePath, expectError, expectValidation } from "./helpers.ts"
import { App, backend, withApp } from "../support/TestApp.ts"
import { messagesPath } from "../support/Messages.ts"

const receiptDelayMs = 2_000

const clockNow: Effect.Effect<number, never, App> = Effect.gen(function* () {
  const reply = yield* (yield* App).admin("GET", "/clock")
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body.mode).toBe("test")
  return Date.parse(reply.body.now)
})

const advance = (body: { seconds: number } | { to: string }) =>
  Effect.gen(function* () {
    const app = yield* App
    const reply = yield* app.admin("POST", "/clock/advance", body)
    expect(reply.status, reply.text).toBe(200)
    expect(Object.keys(reply.body)).toEqual(["now"])
    return Date.parse(reply.body.now)
  })

const post = (apiKey: string, path: string, body: unknown) =>
  Effect.flatMap(App, (app) =>
    app.call("POST", path, { token: apiKey, body, headers: { "idempotency-key": crypto.randomUUID() } })
  )

const statusOf = (apiKey: string, id: string) =>
  Effect.flatMap(App, (app) => app.call("GET", `${messagesPath}${id}/`, { token: apiKey })).pipe(
    Effect.map((reply) => reply.body)
  )

withApp({ label: "clock", config: { clock: "test", simulatorReceiptDelayMs: receiptDelayMs } })(
  `the test clock through the operator API (${backend})`,
  (it) => {
    it.effect("reads the clock, and the clock stands still between advances", () =>
      Effect.gen(function* () {
        const first = yield* clockNow
        expect(yield* clockNow).toBe(first)
        const later = yield* advance({ seconds: 90 })
        expect(later).toBe(first + 90_000)
        expect(yield* clockNow).toBe(later)
      })
    )

    it.effect(
      "a scheduled message fires on advance, and its receipt comes the simulator's delay later in clock time",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: 5 })
          const start = yield* clockNow
          const sendAt = new Date(start + 3_600_000).toISOString()
          const created = yield* post(apiKey, messagesPath, {
            to: "+261341234567",
            text: "In an hour",
            send_at: sendAt
          })
          expect(created.status, created.text).toBe(202)

          yield* advance({ to: new Date(start + 3_600_000 - 1).toISOString() })
          expect((yield* statusOf(apiKey, created.body.id)).status).toBe("scheduled")

          // at send_at exactly: sent and accepted; the receipt is not due yet
          yield* advance({ to: sendAt })
          expect((yield* statusOf(apiKey, created.body.id)).status).toBe("accepted")

          yield* advance({ seconds: receiptDelayMs / 1000 })
          const delivered = yield* statusOf(apiKey, created.body.id)
          expect(delivered.status).toBe("delivered")
          expect(Date.parse(delivered.delivery_time)).toBe(Date.parse(sendAt) + receiptDelayMs)
        })
    )

    it.effect("a batch fires on advance: every member meets its simulator outcome", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 20 })
        const start = yield* clockNow
        const reply = yield* post(apiKey, batchesPath, {
          recipients: ["+261340000001", "+261340000003", "+261340000004", "+261340000009", "+261331234567"],
          text: "Batch on the test clock",
          send_at: new Date(start + 60_000).toISOString()
        })
        expect(reply.status, reply.text).toBe(202)
        yield* advance({ seconds: 59 })
        expect((yield* app.call("GET", batchPath(reply.body.id), { token: apiKey })).body.counts.scheduled).toBe(5)
        // past send_at, a verification interval and the receipts
        yield* advance({ seconds: 60 })
        const counts = (yield* app.call("GET", batchPath(reply.body.id), { token: apiKey })).body.counts
        expect(counts).toEqual({
          scheduled: 0,
          processing: 0,
          accepted: 0,
          delivered: 3,
          undeliverable: 0,
          blocked: 0,
          failed: 1,
          unknown: 1
        })
      })
    )

    it.effect("credits expire at the end of their valid_until day (UTC), not before", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 0 })
        const now = yield* clockNow
        const today = new Date(now).toISOString().slice(0, 10)
        expect(
          (yield* app.admin("POST", `/organizations/${orgId}/credits`, { amount: 7, valid_until: today })).status
        ).toBe(201)
        const balance = () => app.call("GET", balancePath, { token: apiKey }).pipe(Effect.map((reply) => reply.body))
        expect(yield* balance()).toEqual({ total: 7, reserved: 0, available: 7, valid_until: today })

        const endOfDay = Date.parse(`${today}T23:59:59.999Z`)
        yield* advance({ to: new Date(endOfDay).toISOString() })
        expect((yield* balance()).available).toBe(7)
        yield* advance({ seconds: 0.001 })
        expect(yield* balance()).toEqual({ total: 0, reserved: 0, available: 0, valid_until: null })
        // and an expired credit funds no send
        const refused = yield* post(apiKey, messagesPath, { to: "+261341234567", text: "Too late" })
        expectError(refused, 409, "insufficient_credits")
      })
    )

    it.effect("refuses a non-positive advance, a time in the past, both or neither, with validation_error", () =>
      Effect.gen(function* () {
        const app = yield* App
        const now = yield* clockNow
        for (const body of [
          { seconds: 0 },
          { seconds: -5 },
          { to: new Date(now - 1_000).toISOString() },
          { to: "2030-01-01T00:00:00" },
          { seconds: 1, to: new Date(now + 1_000).toISOString() },
          {}
        ]) {
          const reply = yield* app.admin("POST", "/clock/advance", body)
          expect(expectValidation(reply).length, `${JSON.stringify(body)}: ${reply.text}`).toBeGreaterThan(0)
        }
        expect(yield* clockNow).toBe(now)
      })
    )

    it.effect(
      "refuses to move the clock past 9999-12-31T00:00:00Z (seconds beyond it, or so many no date holds them), naming the field; the clock stays and still serves",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const now = yield* clockNow
          for (const [body, field] of [
            [{ seconds: (Date.parse("9999-12-31T00:00:01Z") - now) / 1000 }, "seconds"],
            [{ seconds: 1e12 }, "seconds"],
            [{ seconds: 4e33 }, "seconds"],
            [{ to: "9999-12-31T23:59:59Z" }, "to"],
            [{ to: "9999-12-31T23:59:59-23:59" }, "to"]
          ] as const) {
            const reply = yield* app.admin("POST", "/clock/advance", body)
            expect(expectValidation(reply), `${JSON.stringify(body)}: ${reply.text}`).toEqual([field])
          }
          expect(yield* clockNow).toBe(now)
          expect((yield* app.call("GET", balancePath, { token: (yield* app.newOrg()).apiKey })).status).toBe(200)
        })
    )

    it.effect("needs the operator token", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.call("GET", "/admin/v1/clock"), 401, "invalid_api_key")
        expectError(
          yield* app.call("POST", "/admin/v1/clock/advance", { body: { seconds: 1 } }),
          401,
          "invalid_api_key"
        )
      })
    )
  }
)

withApp()(`the system clock (${backend})`, (it) => {
  it.effect("reads the clock as system time, and refuses to advance it with 409 clock_not_test", () =>
    Effect.gen(function* () {
      const system = yield* App
      const before = Date.now()
      const reply = yield* system.admin("GET", "/clock")
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.mode).toBe("system")
      expect(Date.parse(reply.body.now)).toBeGreaterThanOrEqual(before - 1_000)
      expectError(yield* system.admin("POST", "/clock/advance", { seconds: 60 }), 409, "clock_not_test")
    })
  )
})
