import { afterAll, describe, expect, it } from "vitest"
import { backend, makeTestApp } from "../support/TestApp.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

describe(`an empty body is not JSON (${backend})`, () => {
  it("answers 400 parse_error on both creation routes and contacts", async () => {
    const { apiKey } = await app.newOrg({ credits: 5 })
    for (const path of ["/api/sms/v2/messages/", "/api/sms/v2/message-batches/", "/api/sms/v2/contacts/"]) {
      const res = await app.call("POST", path, {
        token: apiKey,
        raw: "",
        headers: { "content-type": "application/json", "idempotency-key": "empty-body" }
      })
      expect(res.status, path).toBe(400)
      expect(res.body.error.code, path).toBe("parse_error")
    }
  })
})
