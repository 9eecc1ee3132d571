/**
 * The in-process simulator's two-way side (docs/two-way.md):
 * +261340000010 answers OK and +261340000011 answers STOP to the sender they got a message from,
 * one receipt delay after its receipt, on the service's clock; and the operator makes it send an MO now.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { App, withApp } from "../support/TestApp.ts"
import { inboundFrom, newSender, optOutsOfOrg } from "./support.ts"

const delayMs = 2000

describe("simulator two-way", { timeout: 180_000 }, () => {
  withApp({ label: "inbound_simulator", config: { clock: "test", simulatorReceiptDelayMs: delayMs } })((it) => {
    it.effect("answers OK and STOP one receipt delay after the receipt, routed as replies", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/6060`, { active: true })).status).toBe(200)
        const sent: Record<string, string> = {}
        for (const to of ["+261340000010", "+261340000011"]) {
          const reply = yield* app.call("POST", "/api/sms/v2/messages/", {
            token: apiKey,
            headers: { "idempotency-key": `sim-${to}` },
            body: { to, text: "Manao ahoana", sender_name: "6060" }
          })
          expect(reply.status, reply.text).toBe(201)
          sent[to] = reply.body.id
        }
        yield* app.advance(delayMs)
        expect(yield* inboundFrom("+261340000010")).toHaveLength(0)
        yield* app.advance(delayMs)
        const ok = yield* inboundFrom("+261340000010")
        expect(ok.map((m) => [m.organisationId, m.toNumber, m.text, m.inReplyTo])).toEqual([
          [orgId, "6060", "OK", sent["+261340000010"]]
        ])
        const stop = yield* inboundFrom("+261340000011")
        expect(stop.map((m) => [m.organisationId, m.text, m.keyword])).toEqual([[orgId, "STOP", "STOP"]])
        expect((yield* optOutsOfOrg(orgId)).map((o) => [o.phoneNumber, o.source])).toEqual([["+261340000011", "sms"]])
      })
    )

    it.effect("sends an inbound message on the operator's demand, made into a message before the answer", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg()
        expect((yield* app.admin("PUT", `/organizations/${orgId}/inbound-numbers/5050`, {})).status).toBe(200)
        const from = newSender()
        const long = "Tsy mety aho. ".repeat(20).trim()
        expect((yield* app.admin("POST", "/simulator/inbound", { from, to: "5050", text: long })).status).toBe(202)
        const rows = yield* inboundFrom(from)
        expect(rows.map((m) => [m.organisationId, m.text, m.segments])).toEqual([[orgId, long, 2]])
        const bad = yield* app.admin("POST", "/simulator/inbound", { from: "nobody", to: "5050", text: "x" })
        expect([bad.status, bad.body.error.code]).toEqual([400, "validation_error"])
      })
    )
  })
})
