/** GET /api/sms/v2/balance/ (docs/integrators.md#balance). */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, backend, withApp } from "../support/TestApp.ts"
import { balancePath, utcDate } from "./helpers.ts"

const balanceOf = (apiKey: string) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).call("GET", balancePath, { token: apiKey })
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
    expect(Object.keys(res.body).sort()).toEqual(["available", "reserved", "total", "valid_until"])
    expect(res.body.total).toBe(res.body.available + res.body.reserved)
    return res.body
  })

const grant = (orgId: string, amount: number, validUntil?: string) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).admin("POST", `/organizations/${orgId}/credits`, {
      amount,
      ...(validUntil === undefined ? {} : { valid_until: validUntil })
    })
    expect(res.status, res.text).toBe(201)
  })

withApp()(`balance (${backend})`, (it) => {
  it.effect("a fresh organisation has nothing", () =>
    Effect.gen(function* () {
      const { apiKey } = yield* (yield* App).newOrg()
      expect(yield* balanceOf(apiKey)).toEqual({ total: 0, reserved: 0, available: 0, valid_until: null })
    })
  )

  it.effect("never-expiring grants add up with valid_until null", () =>
    Effect.gen(function* () {
      const { orgId, apiKey } = yield* (yield* App).newOrg()
      yield* grant(orgId, 7)
      yield* grant(orgId, 5)
      expect(yield* balanceOf(apiKey)).toEqual({ total: 12, reserved: 0, available: 12, valid_until: null })
    })
  )

  it.effect("valid_until is the earliest expiry among the valid lots, ignoring never-expiring ones", () =>
    Effect.gen(function* () {
      const { orgId, apiKey } = yield* (yield* App).newOrg()
      const later = utcDate(400)
      const sooner = utcDate(30)
      yield* grant(orgId, 10)
      yield* grant(orgId, 3, later)
      expect(yield* balanceOf(apiKey)).toEqual({ total: 13, reserved: 0, available: 13, valid_until: later })
      yield* grant(orgId, 2, sooner)
      expect(yield* balanceOf(apiKey)).toEqual({ total: 15, reserved: 0, available: 15, valid_until: sooner })
      yield* grant(orgId, 4, utcDate(200))
      expect(yield* balanceOf(apiKey)).toEqual({ total: 19, reserved: 0, available: 19, valid_until: sooner })
    })
  )

  it.effect("more than 2^31 - 1 credits in all (three grants of 10^9, the most one grant gives) read exactly", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg()
      for (let i = 0; i < 3; i++) yield* grant(orgId, 1_000_000_000)
      expect(yield* balanceOf(apiKey)).toEqual({
        total: 3_000_000_000,
        reserved: 0,
        available: 3_000_000_000,
        valid_until: null
      })
      const org = yield* app.admin("GET", `/organizations/${orgId}`)
      expect(org.status, org.text).toBe(200)
      expect(org.body.balance.total).toBe(3_000_000_000)
    })
  )

  it.effect("a lot valid through today counts (the date is inclusive) and is reported as a YYYY-MM-DD date", () =>
    Effect.gen(function* () {
      const { orgId, apiKey } = yield* (yield* App).newOrg()
      const today = utcDate(0)
      yield* grant(orgId, 6, today)
      const body = yield* balanceOf(apiKey)
      expect(body).toEqual({ total: 6, reserved: 0, available: 6, valid_until: today })
      expect(body.valid_until).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    })
  )

  it.effect("the operator's view of the balance matches the organisation's", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg()
      yield* grant(orgId, 9, utcDate(90))
      const org = yield* app.admin("GET", `/organizations/${orgId}`)
      expect(org.status).toBe(200)
      expect(org.body.balance).toEqual(yield* balanceOf(apiKey))
    })
  )

  it.effect("an organisation's key sees only its own credits", () =>
    Effect.gen(function* () {
      const app = yield* App
      const a = yield* app.newOrg({ credits: 10 })
      const b = yield* app.newOrg({ credits: 3 })
      yield* grant(b.orgId, 100, utcDate(10))
      expect(yield* balanceOf(a.apiKey)).toEqual({ total: 10, reserved: 0, available: 10, valid_until: null })
      expect(yield* balanceOf(b.apiKey)).toEqual({ total: 103, reserved: 0, available: 103, valid_until: utcDate(10) })
      yield* grant(a.orgId, 1)
      expect((yield* balanceOf(a.apiKey)).total).toBe(11)
      expect((yield* balanceOf(b.apiKey)).total).toBe(103)
    })
  )

  it.effect("ignores a query string", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { apiKey } = yield* app.newOrg({ credits: 4 })
      const res = yield* app.call("GET", `${balancePath}?organization=other`, { token: apiKey })
      expect(res.status).toBe(200)
      expect(res.body.total).toBe(4)
    })
  )
})
