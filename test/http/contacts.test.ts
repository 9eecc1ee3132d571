/** POST /api/sms/v2/contacts/ (spec 2.8, 2.9, 4.2). */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backend, makeTestApp } from "../support/TestApp.ts"
import { contactsPath, expectError, expectValidation } from "./helpers.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

let apiKey: string
beforeAll(async () => {
  apiKey = (await app.newOrg({ permissions: ["contacts.manage"] })).apiKey
})

let seq = 0
/** A phone number not used before in this file. */
const freshPhone = () => `+26133${String(++seq).padStart(7, "0")}`

const upsert = (body: unknown, key = apiKey) => app.call("POST", contactsPath, { token: key, body })
const upsertRaw = (raw: string, headers: Record<string, string> = {}) => app.call("POST", contactsPath, { token: apiKey, raw, headers })

/** Asserts a 400 validation_error naming `field` among its details. */
const rejects = async (body: Record<string, unknown>, field: string) => {
  const res = await upsert(body)
  expect(expectValidation(res)).toContain(field)
}

describe(`contacts: create and update (${backend})`, () => {
  it("201 on create, 200 on update with the same id", async () => {
    const phone = freshPhone()
    const created = await upsert({ phone_number: phone, first_name: "Rakoto" })
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("content-type") ?? "").toMatch(/^application\/json/)
    expect(Number.isInteger(created.body.id)).toBe(true)
    expect(created.body).toMatchObject({ phone_number: phone, first_name: "Rakoto" })
    const updated = await upsert({ phone_number: phone, first_name: "Rabe" })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ id: created.body.id, phone_number: phone, first_name: "Rabe" })
  })

  it("returns every field written", async () => {
    const full = {
      phone_number: freshPhone(),
      first_name: "Hery",
      company: "Telma",
      position: "CTO",
      address: "Lot II M 85, Antananarivo",
      birthday: "1990-07-26",
      home_email: "hery@example.mg",
      office_email: "",
      list_name: "VIP",
      source: "import",
      status: 3
    }
    const res = await upsert(full)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ id: res.body.id, ...full })
  })

  it("leaves absent optional fields unchanged", async () => {
    const phone = freshPhone()
    const first = { phone_number: phone, first_name: "Soa", company: "Airtel", birthday: "1985-01-02", list_name: "A", source: "web", status: 9 }
    expect((await upsert(first)).status).toBe(201)
    const res = await upsert({ phone_number: phone, position: "Manager" })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ ...first, position: "Manager" })
  })

  it("null clears the nullable fields", async () => {
    const phone = freshPhone()
    const nullable = ["first_name", "company", "position", "address", "birthday", "home_email", "office_email"] as const
    const set = { first_name: "X", company: "Y", position: "Z", address: "W", birthday: "2000-02-29", home_email: "a@b.mg", office_email: "c@d.mg" }
    expect((await upsert({ phone_number: phone, ...set, list_name: "keep" })).status).toBe(201)
    const res = await upsert({ phone_number: phone, ...Object.fromEntries(nullable.map((f) => [f, null])) })
    expect(res.status, res.text).toBe(200)
    for (const f of nullable) expect(res.body[f] ?? null, f).toBeNull()
    expect(res.body.list_name).toBe("keep")
    const again = await upsert({ phone_number: phone })
    for (const f of nullable) expect(again.body[f] ?? null, f).toBeNull()
  })

  it("the same number in two organisations makes two independent contacts", async () => {
    const other = await app.newOrg({ permissions: ["contacts.manage"] })
    const phone = freshPhone()
    const a = await upsert({ phone_number: phone, first_name: "In A" })
    expect(a.status).toBe(201)
    const b = await upsert({ phone_number: phone, first_name: "In B" }, other.apiKey)
    expect(b.status).toBe(201)
    expect(b.body.id).not.toBe(a.body.id)
    const a2 = await upsert({ phone_number: phone })
    expect(a2.status).toBe(200)
    expect(a2.body).toMatchObject({ id: a.body.id, first_name: "In A" })
  })

  it("20 concurrent upserts of one new number: one 201, nineteen 200, one id", async () => {
    const phone = freshPhone()
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => upsert({ phone_number: phone, source: `run${i}` })))
    const statuses = replies.map((r) => r.status).sort()
    expect(statuses).toEqual([...Array(19).fill(200), 201].sort())
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1)
  })
})

describe(`contacts: field rules (${backend})`, () => {
  it("requires phone_number", async () => {
    await rejects({ first_name: "No phone" }, "phone_number")
  })

  it.each([
    ["wrong prefix (+2612)", "+261200000001"],
    ["foreign number", "+33612345678"],
    ["too short", "+26134000000"],
    ["too long", "+2613400000011"],
    ["with spaces", "+261 34 00 000 01"],
    ["without +", "261340000001"],
    ["national form", "0340000001"],
    ["letters", "+26134000000a"],
    ["not a string", 261340000001]
  ])("rejects a phone number: %s", async (_name, phone) => {
    await rejects({ phone_number: phone }, "phone_number")
  })

  for (const field of ["first_name", "company", "position"] as const) {
    it(`${field}: 100 characters ok, 101 rejected`, async () => {
      const phone = freshPhone()
      const ok = await upsert({ phone_number: phone, [field]: "é".repeat(100) })
      expect(ok.status, ok.text).toBe(201)
      expect(ok.body[field]).toBe("é".repeat(100))
      await rejects({ phone_number: phone, [field]: "a".repeat(101) }, field)
    })
  }

  it("address: a long text is accepted", async () => {
    const address = "Immeuble Fitaratra, Ankorondrano, Antananarivo 101. ".repeat(200)
    const res = await upsert({ phone_number: freshPhone(), address })
    expect(res.status, res.text).toBe(201)
    expect(res.body.address).toBe(address)
  })

  it("birthday: a valid date is kept, null clears it", async () => {
    const phone = freshPhone()
    expect((await upsert({ phone_number: phone, birthday: "2024-02-29" })).body.birthday).toBe("2024-02-29")
    const cleared = await upsert({ phone_number: phone, birthday: null })
    expect(cleared.status).toBe(200)
    expect(cleared.body.birthday ?? null).toBeNull()
  })

  it.each(["2023-02-30", "2023-13-01", "yesterday", "2023-2-3", "2023-02-03T00:00:00Z", "", 19900101])(
    "birthday: rejects %j",
    async (birthday) => {
      await rejects({ phone_number: freshPhone(), birthday }, "birthday")
    }
  )

  for (const field of ["home_email", "office_email"] as const) {
    describe(field, () => {
      const local = "a".repeat(64)
      const at254 = `${local}@${"b".repeat(254 - 64 - 1 - 3)}.mg`

      it("accepts a valid address, an empty string, and 254 characters", async () => {
        const phone = freshPhone()
        expect((await upsert({ phone_number: phone, [field]: "rasoa.rabe@example.mg" })).body[field]).toBe("rasoa.rabe@example.mg")
        expect((await upsert({ phone_number: phone, [field]: "" })).body[field]).toBe("")
        expect(at254.length).toBe(254)
        const long = await upsert({ phone_number: phone, [field]: at254 })
        expect(long.status, long.text).toBe(200)
        expect(long.body[field]).toBe(at254)
      })

      it.each([
        ["255 characters", `${local}@${"b".repeat(255 - 64 - 1 - 3)}.mg`],
        ["no @", "rasoa.example.mg"],
        ["no domain", "rasoa@"],
        ["spaces", "ra soa@example.mg"],
        ["two @", "a@b@example.mg"],
        ["a number", 42]
      ])("rejects %s", async (_name, email) => {
        await rejects({ phone_number: freshPhone(), [field]: email }, field)
      })
    })
  }

  it("list_name: 1 and 100 characters ok; empty, 101 and null rejected", async () => {
    const phone = freshPhone()
    expect((await upsert({ phone_number: phone, list_name: "L" })).status).toBe(201)
    expect((await upsert({ phone_number: phone, list_name: "l".repeat(100) })).body.list_name).toBe("l".repeat(100))
    await rejects({ phone_number: phone, list_name: "" }, "list_name")
    await rejects({ phone_number: phone, list_name: "l".repeat(101) }, "list_name")
    await rejects({ phone_number: phone, list_name: null }, "list_name")
  })

  it("source: 1 and 50 characters ok; empty, 51 and null rejected", async () => {
    const phone = freshPhone()
    expect((await upsert({ phone_number: phone, source: "s" })).status).toBe(201)
    expect((await upsert({ phone_number: phone, source: "s".repeat(50) })).body.source).toBe("s".repeat(50))
    await rejects({ phone_number: phone, source: "" }, "source")
    await rejects({ phone_number: phone, source: "s".repeat(51) }, "source")
    await rejects({ phone_number: phone, source: null }, "source")
  })

  it("status: the int64 extremes round-trip exactly", async () => {
    const phone = freshPhone()
    const max = await upsertRaw(`{"phone_number":"${phone}","status":9223372036854775807}`)
    expect(max.status, max.text).toBe(201)
    expect(max.text).toMatch(/"status":\s*9223372036854775807\b/)
    const kept = await upsert({ phone_number: phone, first_name: "Kept" })
    expect(kept.text).toMatch(/"status":\s*9223372036854775807\b/)
    const min = await upsertRaw(`{"phone_number":"${phone}","status":-9223372036854775808}`)
    expect(min.status, min.text).toBe(200)
    expect(min.text).toMatch(/"status":\s*-9223372036854775808\b/)
    const zero = await upsert({ phone_number: phone, status: 0 })
    expect(zero.body.status).toBe(0)
  })

  it.each([
    ["2^63", "9223372036854775808"],
    ["-2^63 - 1", "-9223372036854775809"],
    ["a fraction", "1.5"],
    ["a string", "\"5\""],
    ["null", "null"],
    ["a boolean", "true"]
  ])("status: rejects %s", async (_name, literal) => {
    const res = await upsertRaw(`{"phone_number":"${freshPhone()}","status":${literal}}`)
    expect(expectValidation(res)).toContain("status")
  })

  it("rejects an unknown field and names it", async () => {
    await rejects({ phone_number: freshPhone(), nickname: "Bob" }, "nickname")
  })

  it("reports one detail per bad field", async () => {
    const res = await upsert({
      phone_number: "0340000001",
      first_name: "a".repeat(101),
      birthday: "yesterday",
      home_email: "not-an-email",
      list_name: "",
      colour: "blue"
    })
    const fields = expectValidation(res)
    expect([...fields].sort()).toEqual(["birthday", "colour", "first_name", "home_email", "list_name", "phone_number"])
  })

  it("reports a field breaking two rules once", async () => {
    const res = await upsert({ phone_number: freshPhone(), office_email: `${" ".repeat(300)}` })
    expect(expectValidation(res)).toEqual(["office_email"])
  })

  it("rejects a body that is not an object", async () => {
    expectError(await upsertRaw("[]"), 400, "validation_error")
    expectError(await upsertRaw("null"), 400, "validation_error")
  })
})

describe(`contacts: body format (${backend})`, () => {
  it.each([
    ["truncated JSON", "{\"phone_number\":"],
    ["single quotes", "{'phone_number':'+261340000001'}"],
    ["trailing comma", "{\"phone_number\":\"+261340000001\",}"],
    ["empty body", ""]
  ])("400 parse_error for %s", async (_name, raw) => {
    expectError(await upsertRaw(raw), 400, "parse_error")
  })

  it("415 unsupported_media_type for text/plain", async () => {
    const res = await upsertRaw(JSON.stringify({ phone_number: freshPhone() }), { "content-type": "text/plain" })
    expectError(res, 415, "unsupported_media_type")
  })

  it("415 unsupported_media_type for a form body", async () => {
    const res = await upsertRaw("phone_number=%2B261340000001", { "content-type": "application/x-www-form-urlencoded" })
    expectError(res, 415, "unsupported_media_type")
  })

  it("accepts application/json with a charset", async () => {
    const res = await upsertRaw(JSON.stringify({ phone_number: freshPhone() }), { "content-type": "application/json; charset=utf-8" })
    expect(res.status, res.text).toBe(201)
  })
})
