/**
 * The routes of two-way messages (docs/two-way.md), each answer and
 * error: inbound messages (inbound.read), the opt-out list (contacts.manage), the operator's
 * inbound numbers and inbound messages, and what /metrics counts.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { allPermissions, App, withApp } from "../support/TestApp.ts"
import { newSender, partsOf, receive } from "./support.ts"

const withInbound = [...allPermissions, "inbound.read" as const]
const optOutPath = (phone: string) => `/api/sms/v2/opt-outs/${encodeURIComponent(phone)}/`

describe("two-way routes", { timeout: 180_000 }, () => {
  withApp({ label: "inbound_routes", config: { clock: "test" } })((it) => {
    it.effect("assigns inbound numbers: dedicated or shared by keywords, never both; a keyword once per number", () =>
      Effect.gen(function* () {
        const app = yield* App
        const a = yield* app.newOrg()
        const b = yield* app.newOrg()
        const put = (org: string, number: string, body: unknown = {}) =>
          app.admin("PUT", `/organizations/${org}/inbound-numbers/${encodeURIComponent(number)}`, body)
        expect((yield* put(a.orgId, "3030")).body).toEqual({ number: "3030", keyword: null })
        const taken = yield* put(b.orgId, "3030", { keyword: "promo" })
        expect([taken.status, taken.body.error.code]).toEqual([409, "inbound_number_taken"])
        expect((yield* put(b.orgId, "3030")).status).toBe(409)
        expect((yield* put(a.orgId, "3131", { keyword: "Prömo" })).body).toEqual({ number: "3131", keyword: "PROMO" })
        expect((yield* put(b.orgId, "3131", { keyword: "info" })).status).toBe(200)
        expect((yield* put(b.orgId, "3131", { keyword: "PROMO" })).status).toBe(409)
        expect((yield* put(a.orgId, "3131")).status).toBe(409)
        expect((yield* put(a.orgId, "+261340000000")).status).toBe(200)
        const bad = yield* put(a.orgId, "12")
        expect([bad.status, bad.body.error.code, bad.body.error.details]).toEqual([
          400,
          "validation_error",
          [{ field: "number", message: "must be a short code of 3 to 8 digits or an E.164 number" }]
        ])
        expect((yield* put(a.orgId, "3232", { keyword: "two words" })).status).toBe(400)
        expect((yield* put("00000000-0000-0000-0000-000000000000", "3232")).status).toBe(404)
        const listed = yield* app.admin("GET", `/organizations/${a.orgId}/inbound-numbers`)
        expect(listed.body.results).toEqual([
          { number: "+261340000000", keyword: null },
          { number: "3030", keyword: null },
          { number: "3131", keyword: "PROMO" }
        ])
        expect((yield* app.admin("DELETE", `/organizations/${a.orgId}/inbound-numbers/3030`)).status).toBe(204)
        expect((yield* put(b.orgId, "3030", { keyword: "promo" })).status).toBe(200)
      })
    )

    it.effect("lists and reads the organisation's inbound messages with inbound.read, newest first", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ permissions: withInbound })
        const other = yield* app.newOrg({ permissions: withInbound })
        const noRead = yield* app.newOrg()
        expect((yield* app.admin("PUT", `/organizations/${orgId}/inbound-numbers/4343`, {})).status).toBe(200)
        const from = newSender()
        yield* receive(partsOf("Voalohany", from, "4343"))
        yield* app.advance(1000)
        yield* receive(partsOf("Faharoa", from, "4343"))
        yield* app.advance(1000)
        const list = yield* app.call("GET", "/api/sms/v2/inbound-messages/", { token: apiKey })
        expect(list.status).toBe(200)
        expect(list.body.next_cursor).toBeNull()
        expect(list.body.results.map((m: { text: string }) => m.text)).toEqual(["Faharoa", "Voalohany"])
        const first = list.body.results[1]
        expect(Object.keys(first).sort()).toEqual(
          ["from", "id", "in_reply_to", "incomplete", "keyword", "received_at", "segments", "text", "to"].sort()
        )
        expect(first).toMatchObject({ from, to: "4343", keyword: null, segments: 1, incomplete: false })
        const one = yield* app.call("GET", `/api/sms/v2/inbound-messages/${first.id}/`, { token: apiKey })
        expect(one.body).toEqual(first)
        const elsewhere = yield* app.call("GET", `/api/sms/v2/inbound-messages/${first.id}/`, { token: other.apiKey })
        expect([elsewhere.status, elsewhere.body.error.code]).toEqual([404, "not_found"])
        const denied = yield* app.call("GET", "/api/sms/v2/inbound-messages/", { token: noRead.apiKey })
        expect([denied.status, denied.body.error.code]).toEqual([403, "insufficient_permissions"])
        const cursor = yield* app.call("GET", "/api/sms/v2/inbound-messages/?cursor=nope", { token: apiKey })
        expect([cursor.status, cursor.body.error.code]).toEqual([400, "invalid_cursor"])
        const key = yield* app.admin("POST", `/organizations/${orgId}/api-keys`, { permissions: ["inbound.read"] })
        expect(key.body.permissions).toEqual(["inbound.read"])
      })
    )

    it.effect("opts a number out (201, then 200), lists it, and back in (204, then 404)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg()
        const readOnly = yield* app.newOrg({ permissions: ["delivery.read"] })
        const phone = "+261340000111"
        const first = yield* app.call("PUT", optOutPath(phone), { token: apiKey })
        expect(first.status).toBe(201)
        expect(first.body).toMatchObject({ phone_number: phone, source: "api", inbound_message_id: null })
        const again = yield* app.call("PUT", optOutPath(phone), { token: apiKey })
        expect([again.status, again.body]).toEqual([200, first.body])
        const list = yield* app.call("GET", "/api/sms/v2/opt-outs/", { token: apiKey })
        expect(list.body).toEqual({ results: [first.body], next_cursor: null })
        expect((yield* app.call("DELETE", optOutPath(phone), { token: apiKey })).status).toBe(204)
        const gone = yield* app.call("DELETE", optOutPath(phone), { token: apiKey })
        expect([gone.status, gone.body.error.code]).toEqual([404, "not_found"])
        const bad = yield* app.call("PUT", optOutPath("+33612345678"), { token: apiKey })
        expect([bad.status, bad.body.error.code]).toEqual([400, "validation_error"])
        const denied = yield* app.call("PUT", optOutPath(phone), { token: readOnly.apiKey })
        expect([denied.status, denied.body.error.code]).toEqual([403, "insufficient_permissions"])
      })
    )

    it.effect(
      "shows the operator one organisation's inbound messages and opt-outs as its API does, and no other's",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ permissions: withInbound })
          const other = yield* app.newOrg()
          expect((yield* app.admin("PUT", `/organizations/${orgId}/inbound-numbers/6464`, {})).status).toBe(200)
          expect((yield* app.admin("PUT", `/organizations/${other.orgId}/inbound-numbers/6565`, {})).status).toBe(200)
          const from = newSender()
          const stopper = "+261340000222"
          yield* receive(partsOf("Misaotra", from, "6464"))
          yield* app.advance(1000)
          yield* receive(partsOf("STOP", stopper, "6464"))
          yield* receive(partsOf("Tsy an'ity", from, "6565"))
          yield* app.advance(1000)
          // a second after the STOP's opt-out, so that newest first has one order
          yield* app.advance(1000)
          expect((yield* app.call("PUT", optOutPath("+261340000333"), { token: apiKey })).status).toBe(201)
          expect((yield* app.call("PUT", optOutPath("+261340000444"), { token: other.apiKey })).status).toBe(201)

          const messages = yield* app.admin("GET", `/organizations/${orgId}/inbound-messages`)
          expect(messages.status).toBe(200)
          expect(messages.body.results.map((m: { text: string }) => m.text)).toEqual(["STOP", "Misaotra"])
          expect(messages.body.results[0]).toMatchObject({ from: stopper, to: "6464", keyword: "STOP" })
          const own = yield* app.call("GET", "/api/sms/v2/inbound-messages/", { token: apiKey })
          expect(messages.body).toEqual(own.body)

          const optOuts = yield* app.admin("GET", `/organizations/${orgId}/opt-outs`)
          expect(optOuts.status).toBe(200)
          expect(
            optOuts.body.results.map((o: { phone_number: string; source: string }) => [o.phone_number, o.source])
          ).toEqual([
            ["+261340000333", "api"],
            [stopper, "sms"]
          ])
          expect(optOuts.body.results[1].inbound_message_id).toBe(messages.body.results[0].id)
          const ownOptOuts = yield* app.call("GET", "/api/sms/v2/opt-outs/", { token: apiKey })
          expect(optOuts.body).toEqual(ownOptOuts.body)

          for (const list of ["inbound-messages", "opt-outs"]) {
            const missing = yield* app.admin("GET", `/organizations/00000000-0000-0000-0000-000000000000/${list}`)
            expect([list, missing.status, missing.body.error.code]).toEqual([list, 404, "not_found"])
            const cursor = yield* app.admin("GET", `/organizations/${orgId}/${list}?cursor=nope`)
            expect([list, cursor.status, cursor.body.error.code]).toEqual([list, 400, "invalid_cursor"])
            const customer = yield* app.call("GET", `/admin/v1/organizations/${orgId}/${list}`, { token: apiKey })
            expect([list, customer.status, customer.body.error.code]).toEqual([list, 401, "invalid_api_key"])
          }
        })
    )

    it.effect("lists unrouted messages for the operator and counts them in /metrics", () =>
      Effect.gen(function* () {
        const app = yield* App
        const from = newSender()
        yield* receive(partsOf("STOP", from, "9898"))
        yield* app.advance(1000)
        const page = yield* app.admin("GET", "/inbound-messages?routed=false")
        const mine = page.body.results.filter((m: { from: string }) => m.from === from)
        expect(mine).toHaveLength(1)
        expect(mine[0]).toMatchObject({ org_id: null, to: "9898", text: "STOP", keyword: null })
        const metrics = yield* app.call("GET", "/metrics", { token: "test-operator-token-0123456789" })
        expect(metrics.text).toMatch(/sms_inbound_total\{[^}]*routed="false"[^}]*\} [1-9]/)
        expect(metrics.text).toMatch(/sms_opt_outs\{[^}]*source="sms"/)
      })
    )
  })
})
