import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, backend, withApp } from "../support/TestApp.ts"

withApp()(`an empty body is not JSON (${backend})`, (it) => {
  it.effect("answers 400 parse_error on both creation routes and contacts", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { apiKey } = yield* app.newOrg({ credits: 5 })
      for (const path of ["/api/sms/v2/messages/", "/api/sms/v2/message-batches/", "/api/sms/v2/contacts/"]) {
        const res = yield* app.call("POST", path, {
          token: apiKey,
          raw: "",
          headers: { "content-type": "application/json", "idempotency-key": "empty-body" }
        })
        expect(res.status, path).toBe(400)
        expect(res.body.error.code, path).toBe("parse_error")
      }
    })
  )
})
