/**
 * The integrators' typed client (src/client/, packed as `sms-service-client` from client/) against the in-process app
 * on the test clock: send, replay, typed errors, polling to a final status.
 */
import { randomUUID } from "node:crypto"
import { Effect, Exit, Fiber } from "effect"
import { expect } from "@effect/vitest"
import {
  createBatch,
  createWebhook,
  IdempotencyConflict,
  InvalidApiKey,
  makeSmsClient,
  MessageNotFinal,
  sendMessage,
  type SmsClient,
  ValidationError,
  waitForFinalStatus
} from "../../src/client/index.ts"
import { appHttpClient } from "../support/AppHttpClient.ts"
import { allPermissions, App, backend, withApp } from "../support/TestApp.ts"

// on the test clock: a receipt comes when the test advances the clock past it

/**
 * Runs `f` with a client for a new organisation holding credits and every permission: the
 * integrator's own program, in a runtime of its own (its clock is not the app's), over the app's handler.
 */
const withClient = <A, E>(f: (client: SmsClient) => Effect.Effect<A, E>, apiKey?: string) =>
  Effect.gen(function* () {
    const app = yield* App
    const key = apiKey ?? (yield* app.newOrg({ credits: 100 })).apiKey
    return yield* Effect.promise(() =>
      Effect.runPromise(
        makeSmsClient({ baseUrl: "http://sms.test", apiKey: key }).pipe(
          Effect.flatMap(f),
          Effect.provide(appHttpClient(app.handler))
        )
      )
    )
  })

const newKey = () => `client-${randomUUID()}`
const fastPoll = { interval: "20 millis", timeout: "10 seconds" } as const

withApp({ label: "client", config: { clock: "test", simulatorReceiptDelayMs: 100 } })(
  `the typed client (${backend})`,
  (it) => {
    it.effect("sends a message (201), and the same key and body replay the first answer", () =>
      Effect.gen(function* () {
        yield* withClient((client) =>
          Effect.gen(function* () {
            const key = newKey()
            const first = yield* sendMessage(client, key, { to: "+261340000001", text: "Salama!" })
            expect(first).toMatchObject({
              status: 201,
              replayed: false,
              body: { to: "+261340000001", status: "accepted", segments: 1 }
            })
            expect(first.location).toBe(`/api/sms/v2/messages/${first.body.id}/`)

            const again = yield* sendMessage(client, key, { text: "Salama!", to: "+261340000001" })
            expect(again).toEqual({ ...first, replayed: true })

            // the raw typed client reads the same message
            expect((yield* client.messages.get({ params: { message_id: first.body.id } })).id).toBe(first.body.id)
          })
        )
      })
    )

    it.effect("schedules with send_at (202) and creates a batch (202), each replayable", () =>
      Effect.gen(function* () {
        yield* withClient((client) =>
          Effect.gen(function* () {
            const sendAt = new Date(Date.now() + 86_400_000).toISOString()
            const scheduled = yield* sendMessage(client, newKey(), {
              to: "+261340000001",
              text: "Later",
              send_at: sendAt
            })
            expect(scheduled).toMatchObject({ status: 202, replayed: false, body: { status: "scheduled" } })

            const key = newKey()
            const batch = yield* createBatch(client, key, {
              recipients: ["+261340000001", "+261340000002"],
              text: "All",
              send_at: sendAt
            })
            expect(batch).toMatchObject({
              status: 202,
              replayed: false,
              body: { recipient_count: 2, credits_reserved: 2 }
            })
            expect(batch.location).toBe(`/api/sms/v2/message-batches/${batch.body.id}/`)
            expect(
              yield* createBatch(client, key, {
                recipients: ["+261340000001", "+261340000002"],
                text: "All",
                send_at: sendAt
              })
            ).toEqual({ ...batch, replayed: true })
          })
        )
      })
    )

    it.effect("fails with the typed 409 idempotency_conflict when the key is reused with another body", () =>
      Effect.gen(function* () {
        const error = yield* withClient((client) =>
          Effect.gen(function* () {
            const key = newKey()
            yield* sendMessage(client, key, { to: "+261340000001", text: "First" })
            return yield* Effect.flip(sendMessage(client, key, { to: "+261340000001", text: "Second" }))
          })
        )
        expect(error).toBeInstanceOf(IdempotencyConflict)
        expect(error._tag).toBe("IdempotencyConflict")
        if (!(error instanceof IdempotencyConflict)) throw error
        expect(error.error.code).toBe("idempotency_conflict")
      })
    )

    it.effect("fails with the typed 400 validation_error the service judges (three segments), naming the field", () =>
      Effect.gen(function* () {
        const error = yield* withClient((client) =>
          Effect.flip(sendMessage(client, newKey(), { to: "+261340000001", text: "a".repeat(307) }))
        )
        expect(error).toBeInstanceOf(ValidationError)
        if (!(error instanceof ValidationError)) throw error
        expect(error.error.code).toBe("validation_error")
        expect(error.error.details?.map((d) => d.field)).toEqual(["text"])
      })
    )

    it.effect("refuses a payload its schema rejects before sending it (SchemaError), catching it with catchTag", () =>
      Effect.gen(function* () {
        const tag = yield* withClient((client) =>
          sendMessage(client, newKey(), { to: "+26134000000", text: "short number" }).pipe(
            Effect.as("sent"),
            Effect.catchTag("SchemaError", (e) => Effect.succeed(`${e._tag}: ${e.message}`))
          )
        )
        expect(tag).toMatch(/^SchemaError: .*Malagasy mobile number/)
      })
    )

    it.effect("fails with the typed 401 invalid_api_key for a revoked key", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey, keyId } = yield* app.newOrg({ credits: 1 })
        expect((yield* app.admin("POST", `/api-keys/${keyId}/revoke`)).status).toBe(200)
        const error = yield* withClient((client) => Effect.flip(client.balance.get()), apiKey)
        expect(error).toBeInstanceOf(InvalidApiKey)
      })
    )

    it.effect("polls a message until the simulator's receipt makes it final", () =>
      Effect.gen(function* () {
        const app = yield* App
        let sent = false
        const polling = yield* Effect.forkChild(
          withClient((client) =>
            Effect.gen(function* () {
              const a = yield* sendMessage(client, newKey(), { to: "+261340000001", text: "Delivered" })
              const b = yield* sendMessage(client, newKey(), { to: "+261340000002", text: "Undeliverable" })
              expect([a.body.status, b.body.status]).toEqual(["accepted", "accepted"])
              sent = true
              return yield* Effect.all([
                waitForFinalStatus(client, a.body.id, fastPoll),
                waitForFinalStatus(client, b.body.id, fastPoll)
              ])
            })
          )
        )
        // while the client polls, the receipts fall due
        while (!sent) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
        yield* app.advance(200)
        const [delivered, undeliverable] = yield* Fiber.join(polling)
        expect(delivered).toMatchObject({ status: "delivered", delivery_time: expect.any(String) })
        expect(undeliverable.status).toBe("undeliverable")
      })
    )

    it.effect("lists webhook endpoints and their deliveries in the envelope of every list (results, next_cursor)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ permissions: [...allPermissions, "webhooks.manage"] })
        const [list, deliveries] = yield* withClient(
          (client) =>
            Effect.gen(function* () {
              const created = yield* createWebhook(client, newKey(), { url: "http://127.0.0.1:9/hooks" })
              return [
                yield* client.webhooks.list(),
                yield* client.webhooks.deliveries({ params: { webhook_id: created.body.id }, query: {} })
              ] as const
            }),
          apiKey
        )
        expect(list).toEqual({
          results: [expect.objectContaining({ url: "http://127.0.0.1:9/hooks" })],
          next_cursor: null
        })
        expect(deliveries).toEqual({ results: [], next_cursor: null })
      })
    )

    it.effect("gives up with MessageNotFinal, carrying the last read, when no receipt ever comes", () =>
      Effect.gen(function* () {
        const exit = yield* withClient((client) =>
          sendMessage(client, newKey(), { to: "+261340000006", text: "No receipt" }).pipe(
            Effect.flatMap((sent) =>
              waitForFinalStatus(client, sent.body.id, { interval: "20 millis", timeout: "300 millis" })
            ),
            Effect.exit
          )
        )
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        expect(error?._tag).toBe("Fail")
        const failure = error?._tag === "Fail" ? error.error : undefined
        expect(failure).toBeInstanceOf(MessageNotFinal)
        expect(failure instanceof MessageNotFinal && failure.last.status).toBe("accepted")
      })
    )
  }
)
