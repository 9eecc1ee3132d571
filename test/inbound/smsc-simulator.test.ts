/**
 * The SMSC simulator's two-way side (docs/two-way.md#simulators), through the service's SMPP
 * provider: +261340000010 answers OK and +261340000011 answers STOP one receipt delay after their
 * receipt, routed as replies (the STOP opts the number out, and the next send to it is refused);
 * an MO sent on demand, a long text in each part form, shuffled and with a part repeated, becomes
 * one inbound message with the whole text; the control port takes such an MO and names a bad field.
 */
import type { Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mobileOriginatedOf, serveControl } from "../../simulator/smsc/Control.ts"
import { partForms } from "../../simulator/smsc/MoParts.ts"
import type { Smsc } from "../../simulator/smsc/Smsc.ts"
import { smppApp } from "../provider/smpp/service.ts"
import { routeTo, startSmsc, until } from "../provider/smpp/support.ts"
import { App, backend, withApp } from "../support/TestApp.ts"
import { inboundFrom, newSender, optOutsOfOrg } from "./support.ts"

let smsc: Smsc
let control: Server
let controlUrl: string

beforeAll(async () => {
  smsc = await startSmsc({ receiptDelayMs: 200, receiptRetryMs: 200 })
  control = await serveControl(smsc, 0)
  const address = control.address()
  controlUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/mobile-originated`
})
afterAll(async () => {
  control?.close()
  await smsc?.dispose()
})

/** Waits (bounded) until the inbound messages from `from` satisfy `done`; returns them. */
const inboundUntil = (from: string, done: (rows: ReadonlyArray<{ text: string }>) => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 300; i++) {
      const rows = yield* inboundFrom(from)
      if (done(rows)) return rows
      yield* Effect.sleep(50)
    }
    return yield* Effect.die(new Error(`timed out waiting for the inbound messages from ${from}`))
  })

const long = "Misaotra betsaka tompoko, tonga soa ny hafatrao. ".repeat(7).trim()

describe(`SMSC simulator two-way (${backend})`, { timeout: 120_000 }, () => {
  withApp(smppApp("inbound_smsc", () => [routeTo(smsc)]))((it) => {
    it.effect("answers OK and STOP after the receipt, as replies; the STOP opts out and the next send is refused", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/6061`, { active: true })).status).toBe(200)
        const sent: Record<string, string> = {}
        for (const to of ["+261340000010", "+261340000011"]) {
          const reply = yield* app.call("POST", "/api/sms/v2/messages/", {
            token: apiKey,
            headers: { "idempotency-key": `smsc-${to}-${orgId}` },
            body: { to, text: "Manao ahoana", sender_name: "6061" }
          })
          expect(reply.status, reply.text).toBe(201)
          sent[to] = reply.body.id
        }
        const ok = yield* inboundUntil("+261340000010", (rows) => rows.length > 0)
        expect(ok.map((m) => [m.organisationId, m.toNumber, m.text, m.inReplyTo])).toEqual([
          [orgId, "6061", "OK", sent["+261340000010"]]
        ])
        const stop = yield* inboundUntil("+261340000011", (rows) => rows.length > 0)
        expect(stop.map((m) => [m.organisationId, m.text, m.keyword, m.inReplyTo])).toEqual([
          [orgId, "STOP", "STOP", sent["+261340000011"]]
        ])
        expect((yield* optOutsOfOrg(orgId)).map((o) => [o.phoneNumber, o.source])).toEqual([["+261340000011", "sms"]])
        const refused = yield* app.call("POST", "/api/sms/v2/messages/", {
          token: apiKey,
          headers: { "idempotency-key": `smsc-after-stop-${orgId}` },
          body: { to: "+261340000011", text: "Manao ahoana indray", sender_name: "6061" }
        })
        expect([refused.status, refused.body.error?.code, refused.body.error?.details]).toEqual([
          400,
          "validation_error",
          [{ field: "to", message: "opted out of this organisation's messages" }]
        ])
      })
    )

    it.effect(
      "sends a long MO on demand in each part form, shuffled with a part repeated: one message, the whole text",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId } = yield* app.newOrg()
          expect((yield* app.admin("PUT", `/organizations/${orgId}/inbound-numbers/5151`, {})).status).toBe(200)
          const answersBefore = smsc.mobileOriginatedAnswers.length
          let pdus = 0
          const senders = partForms.map((form) => {
            const from = newSender()
            pdus += smsc.sendMobileOriginated({ from, to: "5151", text: long, form, shuffle: true, repeatPart: 0 })
            return [from, form] as const
          })
          // three parts and a repeat for each cut form; one message_payload, repeated
          expect(pdus).toBe(3 * 4 + 2)
          yield* until("every part answered", () => smsc.mobileOriginatedAnswers.length - answersBefore >= pdus, 20_000)
          expect(smsc.mobileOriginatedAnswers.slice(answersBefore)).toEqual(Array(pdus).fill(0))
          // stored before their answers; the message the parts make follows at once or at the assembler's next round
          for (const [from, form] of senders) {
            const rows = yield* inboundUntil(from, (r) => r.length > 0)
            expect(rows.map((m) => [m.organisationId, m.toNumber, m.text, m.segments, m.incomplete])).toEqual([
              // `segments` counts the distinct parts that came (docs/two-way.md#reassembly)
              [orgId, "5151", long, form === "payload" ? 1 : 3, false]
            ])
          }
        })
    )

    it.effect("takes an MO on its control port, and names the field of a bad request", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg()
        expect((yield* app.admin("PUT", `/organizations/${orgId}/inbound-numbers/5252`, {})).status).toBe(200)
        const from = newSender()
        const post = (body: unknown) =>
          Effect.promise(async () => {
            const res = await fetch(controlUrl, { method: "POST", body: JSON.stringify(body) })
            return { status: res.status, body: (await res.json()) as Record<string, unknown> }
          })
        expect(yield* post({ from, to: "5252", text: long, form: "sar" })).toEqual({
          status: 202,
          body: { deliver_sm: 3 }
        })
        const rows = yield* inboundUntil(from, (r) => r.length > 0)
        expect(rows.map((m) => m.text)).toEqual([long])
        const bad = yield* post({ from: "0341234567", to: "5252", text: "x" })
        expect([bad.status, String(bad.body.error)]).toEqual([400, expect.stringContaining("from:")])
        expect((yield* post({ from, to: "5252", text: "x", form: "udh7" })).body.error).toContain("form: one of")
      })
    )
  })
})

describe("the control port's reading of a request", () => {
  it.each([
    [
      { from: "+261341234567", to: "4242", text: "STOP" },
      { from: "+261341234567", to: "4242", text: "STOP" }
    ],
    [
      { from: "+261341234567", to: "DEMO", text: "a", form: "payload", shuffle: false, repeat_part: 1 },
      { from: "+261341234567", to: "DEMO", text: "a", form: "payload", shuffle: false, repeatPart: 1 }
    ],
    [[], "the body must be a JSON object"],
    [{ from: "+261341234567", to: "42", text: "x" }, expect.stringContaining("to:")],
    [{ from: "+261341234567", to: "4242", text: "" }, expect.stringContaining("text:")],
    [{ from: "+261341234567", to: "4242", text: "x", shuffle: "yes" }, "shuffle: true or false"],
    [{ from: "+261341234567", to: "4242", text: "x", repeat_part: -1 }, expect.stringContaining("repeat_part:")]
  ])("%j", (body: unknown, expected: unknown) => {
    expect(mobileOriginatedOf(body)).toEqual(expected)
  })
})
