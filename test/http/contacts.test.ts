/** POST /api/sms/v2/contacts/ (docs/integrators.md#contacts). */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, backend, withApp } from "../support/TestApp.ts"
import { contactsPath, expectError, expectValidation } from "./helpers.ts"

let apiKey: string
const newOrg = Effect.gen(function* () {
  apiKey = (yield* (yield* App).newOrg({ permissions: ["contacts.manage"] })).apiKey
})

let seq = 0
/** A phone number not used before in this file. */
const freshPhone = () => `+26133${String(++seq).padStart(7, "0")}`

const upsert = (body: unknown, key = apiKey) =>
  Effect.flatMap(App, (app) => app.call("POST", contactsPath, { token: key, body }))
const upsertRaw = (raw: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(App, (app) => app.call("POST", contactsPath, { token: apiKey, raw, headers }))

/** Asserts a 400 validation_error naming `field` among its details. */
const rejects = (body: Record<string, unknown>, field: string) =>
  Effect.gen(function* () {
    const res = yield* upsert(body)
    expect(expectValidation(res)).toContain(field)
  })

withApp(
  {},
  newOrg
)((it) => {
  describe(`contacts: create and update (${backend})`, () => {
    it.effect("201 on create, 200 on update with the same id", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        const created = yield* upsert({ phone_number: phone, first_name: "Rakoto" })
        expect(created.status, created.text).toBe(201)
        expect(created.headers.get("content-type") ?? "").toMatch(/^application\/json/)
        expect(Number.isInteger(created.body.id)).toBe(true)
        expect(created.body).toMatchObject({ phone_number: phone, first_name: "Rakoto" })
        const updated = yield* upsert({ phone_number: phone, first_name: "Rabe" })
        expect(updated.status, updated.text).toBe(200)
        expect(updated.body).toMatchObject({ id: created.body.id, phone_number: phone, first_name: "Rabe" })
      })
    )

    it.effect("returns every field written", () =>
      Effect.gen(function* () {
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
        const res = yield* upsert(full)
        expect(res.status).toBe(201)
        expect(res.body).toEqual({ id: res.body.id, ...full })
      })
    )

    it.effect("leaves absent optional fields unchanged", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        const first = {
          phone_number: phone,
          first_name: "Soa",
          company: "Airtel",
          birthday: "1985-01-02",
          list_name: "A",
          source: "web",
          status: 9
        }
        expect((yield* upsert(first)).status).toBe(201)
        const res = yield* upsert({ phone_number: phone, position: "Manager" })
        expect(res.status).toBe(200)
        expect(res.body).toMatchObject({ ...first, position: "Manager" })
      })
    )

    it.effect("null clears the nullable fields", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        const nullable = [
          "first_name",
          "company",
          "position",
          "address",
          "birthday",
          "home_email",
          "office_email"
        ] as const
        const set = {
          first_name: "X",
          company: "Y",
          position: "Z",
          address: "W",
          birthday: "2000-02-29",
          home_email: "a@b.mg",
          office_email: "c@d.mg"
        }
        expect((yield* upsert({ phone_number: phone, ...set, list_name: "keep" })).status).toBe(201)
        const res = yield* upsert({ phone_number: phone, ...Object.fromEntries(nullable.map((f) => [f, null])) })
        expect(res.status, res.text).toBe(200)
        for (const f of nullable) expect(res.body[f] ?? null, f).toBeNull()
        expect(res.body.list_name).toBe("keep")
        const again = yield* upsert({ phone_number: phone })
        for (const f of nullable) expect(again.body[f] ?? null, f).toBeNull()
      })
    )

    it.effect("the same number in two organisations makes two independent contacts", () =>
      Effect.gen(function* () {
        const app = yield* App
        const other = yield* app.newOrg({ permissions: ["contacts.manage"] })
        const phone = freshPhone()
        const a = yield* upsert({ phone_number: phone, first_name: "In A" })
        expect(a.status).toBe(201)
        const b = yield* upsert({ phone_number: phone, first_name: "In B" }, other.apiKey)
        expect(b.status).toBe(201)
        expect(b.body.id).not.toBe(a.body.id)
        const a2 = yield* upsert({ phone_number: phone })
        expect(a2.status).toBe(200)
        expect(a2.body).toMatchObject({ id: a.body.id, first_name: "In A" })
      })
    )

    it.effect("20 concurrent upserts of one new number: one 201, nineteen 200, one id", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        const replies = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => upsert({ phone_number: phone, source: `run${i}` })),
          { concurrency: "unbounded" }
        )
        const statuses = replies.map((r) => r.status).sort()
        expect(statuses).toEqual([...Array(19).fill(200), 201].sort())
        expect(new Set(replies.map((r) => r.body.id)).size).toBe(1)
      })
    )
  })

  describe(`contacts: field rules (${backend})`, () => {
    it.effect("requires phone_number", () =>
      Effect.gen(function* () {
        yield* rejects({ first_name: "No phone" }, "phone_number")
      })
    )

    it.effect.each([
      ["wrong prefix (+2612)", "+261200000001"],
      ["foreign number", "+33612345678"],
      ["too short", "+26134000000"],
      ["too long", "+2613400000011"],
      ["with spaces", "+261 34 00 000 01"],
      ["without +", "261340000001"],
      ["national form", "0340000001"],
      ["letters", "+26134000000a"],
      ["not a string", 261340000001]
    ])("rejects a phone number: %s", ([_name, phone]) =>
      Effect.gen(function* () {
        yield* rejects({ phone_number: phone }, "phone_number")
      })
    )

    for (const field of ["first_name", "company", "position"] as const) {
      it.effect(`${field}: 100 characters ok, 101 rejected`, () =>
        Effect.gen(function* () {
          const phone = freshPhone()
          const ok = yield* upsert({ phone_number: phone, [field]: "é".repeat(100) })
          expect(ok.status, ok.text).toBe(201)
          expect(ok.body[field]).toBe("é".repeat(100))
          yield* rejects({ phone_number: phone, [field]: "a".repeat(101) }, field)
        })
      )
    }

    it.effect("address: a long text is accepted", () =>
      Effect.gen(function* () {
        const address = "Immeuble Fitaratra, Ankorondrano, Antananarivo 101. ".repeat(200)
        const res = yield* upsert({ phone_number: freshPhone(), address })
        expect(res.status, res.text).toBe(201)
        expect(res.body.address).toBe(address)
      })
    )

    it.effect("birthday: a valid date is kept, null clears it", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        expect((yield* upsert({ phone_number: phone, birthday: "2024-02-29" })).body.birthday).toBe("2024-02-29")
        const cleared = yield* upsert({ phone_number: phone, birthday: null })
        expect(cleared.status).toBe(200)
        expect(cleared.body.birthday ?? null).toBeNull()
      })
    )

    it.effect.each(["2023-02-30", "2023-13-01", "yesterday", "2023-2-3", "2023-02-03T00:00:00Z", "", 19900101])(
      "birthday: rejects %j",
      (birthday) =>
        Effect.gen(function* () {
          yield* rejects({ phone_number: freshPhone(), birthday }, "birthday")
        })
    )

    for (const field of ["home_email", "office_email"] as const) {
      describe(field, () => {
        const local = "a".repeat(64)
        const at254 = `${local}@${"b".repeat(254 - 64 - 1 - 3)}.mg`

        it.effect("accepts a valid address, an empty string, and 254 characters", () =>
          Effect.gen(function* () {
            const phone = freshPhone()
            expect((yield* upsert({ phone_number: phone, [field]: "rasoa.rabe@example.mg" })).body[field]).toBe(
              "rasoa.rabe@example.mg"
            )
            expect((yield* upsert({ phone_number: phone, [field]: "" })).body[field]).toBe("")
            expect(at254.length).toBe(254)
            const long = yield* upsert({ phone_number: phone, [field]: at254 })
            expect(long.status, long.text).toBe(200)
            expect(long.body[field]).toBe(at254)
          })
        )

        it.effect.each([
          ["255 characters", `${local}@${"b".repeat(255 - 64 - 1 - 3)}.mg`],
          ["no @", "rasoa.example.mg"],
          ["no domain", "rasoa@"],
          ["spaces", "ra soa@example.mg"],
          ["two @", "a@b@example.mg"],
          ["a number", 42]
        ])("rejects %s", ([_name, email]) =>
          Effect.gen(function* () {
            yield* rejects({ phone_number: freshPhone(), [field]: email }, field)
          })
        )
      })
    }

    it.effect("list_name: 1 and 100 characters ok; empty, 101 and null rejected", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        expect((yield* upsert({ phone_number: phone, list_name: "L" })).status).toBe(201)
        expect((yield* upsert({ phone_number: phone, list_name: "l".repeat(100) })).body.list_name).toBe(
          "l".repeat(100)
        )
        yield* rejects({ phone_number: phone, list_name: "" }, "list_name")
        yield* rejects({ phone_number: phone, list_name: "l".repeat(101) }, "list_name")
        yield* rejects({ phone_number: phone, list_name: null }, "list_name")
      })
    )

    it.effect("source: 1 and 50 characters ok; empty, 51 and null rejected", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        expect((yield* upsert({ phone_number: phone, source: "s" })).status).toBe(201)
        expect((yield* upsert({ phone_number: phone, source: "s".repeat(50) })).body.source).toBe("s".repeat(50))
        yield* rejects({ phone_number: phone, source: "" }, "source")
        yield* rejects({ phone_number: phone, source: "s".repeat(51) }, "source")
        yield* rejects({ phone_number: phone, source: null }, "source")
      })
    )

    it.effect("status: the int64 extremes round-trip exactly", () =>
      Effect.gen(function* () {
        const phone = freshPhone()
        const max = yield* upsertRaw(`{"phone_number":"${phone}","status":9223372036854775807}`)
        expect(max.status, max.text).toBe(201)
        expect(max.text).toMatch(/"status":\s*9223372036854775807\b/)
        const kept = yield* upsert({ phone_number: phone, first_name: "Kept" })
        expect(kept.text).toMatch(/"status":\s*9223372036854775807\b/)
        const min = yield* upsertRaw(`{"phone_number":"${phone}","status":-9223372036854775808}`)
        expect(min.status, min.text).toBe(200)
        expect(min.text).toMatch(/"status":\s*-9223372036854775808\b/)
        const zero = yield* upsert({ phone_number: phone, status: 0 })
        expect(zero.body.status).toBe(0)
      })
    )

    it.effect.each([
      ["2^63", "9223372036854775808"],
      ["-2^63 - 1", "-9223372036854775809"],
      ["a fraction", "1.5"],
      ["a string", '"5"'],
      ["null", "null"],
      ["a boolean", "true"]
    ])("status: rejects %s", ([_name, literal]) =>
      Effect.gen(function* () {
        const res = yield* upsertRaw(`{"phone_number":"${freshPhone()}","status":${literal}}`)
        expect(expectValidation(res)).toContain("status")
      })
    )

    it.effect("rejects an unknown field and names it", () =>
      Effect.gen(function* () {
        yield* rejects({ phone_number: freshPhone(), nickname: "Bob" }, "nickname")
      })
    )

    it.effect("reports one detail per bad field", () =>
      Effect.gen(function* () {
        const res = yield* upsert({
          phone_number: "0340000001",
          first_name: "a".repeat(101),
          birthday: "yesterday",
          home_email: "not-an-email",
          list_name: "",
          colour: "blue"
        })
        const fields = expectValidation(res)
        expect([...fields].sort()).toEqual([
          "birthday",
          "colour",
          "first_name",
          "home_email",
          "list_name",
          "phone_number"
        ])
      })
    )

    it.effect("reports a field breaking two rules once", () =>
      Effect.gen(function* () {
        const res = yield* upsert({ phone_number: freshPhone(), office_email: `${" ".repeat(300)}` })
        expect(expectValidation(res)).toEqual(["office_email"])
      })
    )

    it.effect("rejects a body that is not an object", () =>
      Effect.gen(function* () {
        expectError(yield* upsertRaw("[]"), 400, "validation_error")
        expectError(yield* upsertRaw("null"), 400, "validation_error")
      })
    )
  })

  describe(`contacts: body format (${backend})`, () => {
    it.effect.each([
      ["truncated JSON", '{"phone_number":'],
      ["single quotes", "{'phone_number':'+261340000001'}"],
      ["trailing comma", '{"phone_number":"+261340000001",}'],
      ["empty body", ""]
    ])("400 parse_error for %s", ([_name, raw]) =>
      Effect.gen(function* () {
        expectError(yield* upsertRaw(raw), 400, "parse_error")
      })
    )

    it.effect("415 unsupported_media_type for text/plain", () =>
      Effect.gen(function* () {
        const res = yield* upsertRaw(JSON.stringify({ phone_number: freshPhone() }), { "content-type": "text/plain" })
        expectError(res, 415, "unsupported_media_type")
      })
    )

    it.effect("415 unsupported_media_type for a form body", () =>
      Effect.gen(function* () {
        const res = yield* upsertRaw("phone_number=%2B261340000001", {
          "content-type": "application/x-www-form-urlencoded"
        })
        expectError(res, 415, "unsupported_media_type")
      })
    )

    it.effect("accepts application/json with a charset", () =>
      Effect.gen(function* () {
        const res = yield* upsertRaw(JSON.stringify({ phone_number: freshPhone() }), {
          "content-type": "application/json; charset=utf-8"
        })
        expect(res.status, res.text).toBe(201)
      })
    )
  })
})
