import { afterAll, describe, expect, it } from "vitest"
import { backend, makeTestApp } from "../support/TestApp.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

describe(`smoke (${backend})`, () => {
  it("a new organisation's key reads its balance", async () => {
    const { apiKey } = await app.newOrg({ credits: 25 })
    const res = await app.call("GET", "/api/sms/v2/balance/", { token: apiKey })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ total: 25, reserved: 0, available: 25, valid_until: null })
  })
})
