/**
 * The typed client (src/client/) covers the routes of two-way messages
 * (docs/two-way.md): it is derived from the API's declaration, so
 * the opt-out list and the inbound messages are methods with their schemas and typed errors.
 */
import { Effect, Exit } from "effect"
import { expect } from "@effect/vitest"
import { makeSmsClient, NotFound, type SmsClient } from "../../src/client/index.ts"
import { appHttpClient } from "../support/AppHttpClient.ts"
import { allPermissions, App, backend, withApp } from "../support/TestApp.ts"

const withClient = <A, E>(f: (client: SmsClient) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const app = yield* App
    const { apiKey } = yield* app.newOrg({ permissions: [...allPermissions, "inbound.read"] })
    return yield* Effect.promise(() =>
      Effect.runPromise(
        makeSmsClient({ baseUrl: "http://sms.test", apiKey }).pipe(
          Effect.flatMap(f),
          Effect.provide(appHttpClient(app.handler))
        )
      )
    )
  })

withApp({ label: "client_two_way", config: { clock: "test" } })(`the typed client, two-way (${backend})`, (it) => {
  it.effect("opts a number out and in, and lists the opt-outs and inbound messages", () =>
    Effect.gen(function* () {
      yield* withClient((client) =>
        Effect.gen(function* () {
          const phone_number = "+261340000222"
          const out = yield* client["opt-outs"].put({ params: { phone_number } })
          expect(out).toMatchObject({ phone_number, source: "api", inbound_message_id: null })
          const list = yield* client["opt-outs"].list({ query: {} })
          expect(list.results.map((o) => o.phone_number)).toEqual([phone_number])
          yield* client["opt-outs"].delete({ params: { phone_number } })
          const again = yield* Effect.exit(client["opt-outs"].delete({ params: { phone_number } }))
          expect(
            Exit.isFailure(again) &&
              Exit.findErrorOption(again).pipe((o) => o._tag === "Some" && o.value instanceof NotFound)
          ).toBe(true)
          const inbound = yield* client["inbound-messages"].list({ query: {} })
          expect(inbound).toEqual({ results: [], next_cursor: null })
        })
      )
    })
  )
})
