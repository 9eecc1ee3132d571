/** GET /api/sms/v2/balance/ (spec 2.7, 4.1; CONTRACT 3). */
import { afterAll, describe, expect, it } from "vitest"
import { backend, makeTestApp } from "../support/TestApp.ts"
import { balancePath, utcDate } from "./helpers.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

const balanceOf = async (apiKey: string) => {
  const res = await app.call("GET", balancePath, { token: apiKey })
  expect(res.status, res.text).toBe(200)
  expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
  expect(Object.keys(res.body).sort()).toEqual(["available", "reserved", "total", "valid_until"])
  expect(res.body.total).toBe(res.body.available + res.body.reserved)
  return res.body
}

const grant = async (orgId: string, amount: number, validUntil?: string) => {
  const res = await app.admin("POST", `/organizations/${orgId}/credits`, {
    amount,
    ...(validUntil === undefined ? {} : { valid_until: validUntil })
  })
  expect(res.status, res.text).toBe(201)
}

describe(`balance (${backend})`, () => {
  it("a fresh organisation has nothing", async () => {
    const { apiKey } = await app.newOrg()
    expect(await balanceOf(apiKey)).toEqual({ total: 0, reserved: 0, available: 0, valid_until: null })
  })

  it("never-expiring grants add up with valid_until null", async () => {
    const { orgId, apiKey } = await app.newOrg()
    await grant(orgId, 7)
    await grant(orgId, 5)
    expect(await balanceOf(apiKey)).toEqual({ total: 12, reserved: 0, available: 12, valid_until: null })
  })

  it("valid_until is the earliest expiry among the valid lots, ignoring never-expiring ones", async () => {
    const { orgId, apiKey } = await app.newOrg()
    const later = utcDate(400)
    const sooner = utcDate(30)
    await grant(orgId, 10)
    await grant(orgId, 3, later)
    expect(await balanceOf(apiKey)).toEqual({ total: 13, reserved: 0, available: 13, valid_until: later })
    await grant(orgId, 2, sooner)
    expect(await balanceOf(apiKey)).toEqual({ total: 15, reserved: 0, available: 15, valid_until: sooner })
    await grant(orgId, 4, utcDate(200))
    expect(await balanceOf(apiKey)).toEqual({ total: 19, reserved: 0, available: 19, valid_until: sooner })
  })

  it("more than 2^31 - 1 credits in all (three grants of 10^9, the most one grant gives) read exactly", async () => {
    const { orgId, apiKey } = await app.newOrg()
    for (let i = 0; i < 3; i++) await grant(orgId, 1_000_000_000)
    expect(await balanceOf(apiKey)).toEqual({ total: 3_000_000_000, reserved: 0, available: 3_000_000_000, valid_until: null })
    const org = await app.admin("GET", `/organizations/${orgId}`)
    expect(org.status, org.text).toBe(200)
    expect(org.body.balance.total).toBe(3_000_000_000)
  })

  it("a lot valid through today counts (the date is inclusive) and is reported as a YYYY-MM-DD date", async () => {
    const { orgId, apiKey } = await app.newOrg()
    const today = utcDate(0)
    await grant(orgId, 6, today)
    const body = await balanceOf(apiKey)
    expect(body).toEqual({ total: 6, reserved: 0, available: 6, valid_until: today })
    expect(body.valid_until).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })

  it("the operator's view of the balance matches the organisation's", async () => {
    const { orgId, apiKey } = await app.newOrg()
    await grant(orgId, 9, utcDate(90))
    const org = await app.admin("GET", `/organizations/${orgId}`)
    expect(org.status).toBe(200)
    expect(org.body.balance).toEqual(await balanceOf(apiKey))
  })

  it("an organisation's key sees only its own credits", async () => {
    const a = await app.newOrg({ credits: 10 })
    const b = await app.newOrg({ credits: 3 })
    await grant(b.orgId, 100, utcDate(10))
    expect(await balanceOf(a.apiKey)).toEqual({ total: 10, reserved: 0, available: 10, valid_until: null })
    expect(await balanceOf(b.apiKey)).toEqual({ total: 103, reserved: 0, available: 103, valid_until: utcDate(10) })
    await grant(a.orgId, 1)
    expect((await balanceOf(a.apiKey)).total).toBe(11)
    expect((await balanceOf(b.apiKey)).total).toBe(103)
  })

  it("ignores a query string", async () => {
    const { apiKey } = await app.newOrg({ credits: 4 })
    const res = await app.call("GET", `${balancePath}?organization=other`, { token: apiKey })
    expect(res.status).toBe(200)
    expect(res.body.total).toBe(4)
  })
})
