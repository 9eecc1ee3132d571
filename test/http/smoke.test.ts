import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, backend, withApp } from "../support/TestApp.ts"

withApp()(`smoke (${backend})`, (it) => {
  it.effect("a new organisation's key reads its balance", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { apiKey } = yield* app.newOrg({ credits: 25 })
      const res = yield* app.call("GET", "/api/sms/v2/balance/", { token: apiKey })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ total: 25, reserved: 0, available: 25, valid_until: null })
    })
  )
})
