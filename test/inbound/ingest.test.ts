/**
 * Inbound messages from their stored parts (docs/two-way.md): parts
 * in any form and order, a repeat counted once, joined by the assembler; a message missing parts
 * made incomplete 10 minutes after its first; routing in its order (dedicated number, keyword on a
 * shared number, reply, unrouted); consent words applied with their events in the same transaction.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { partForms } from "../../simulator/smsc/MoParts.ts"
import { App, withApp } from "../support/TestApp.ts"
import { createEndpoint, withWebhooks } from "../webhooks/support.ts"
import { inboundFrom, newSender, partsOf, receive } from "./support.ts"

const minute = 60_000
const longText = "Misaotra betsaka tompoko! ".repeat(12).trim()

const hold = (orgId: string, number: string, keyword = "") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO inbound_numbers (organisation_id, number, keyword, created_at) VALUES (${orgId}, ${number}, ${keyword}, now())`
  )

const optOutsOf = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ phoneNumber: string; source: string; inboundMessageId: string | null }>`SELECT phone_number, source,
        inbound_message_id::text FROM opt_outs WHERE organisation_id = ${orgId}`
  )

const eventsOf = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ type: string; message: Record<string, unknown> }>`SELECT type, message FROM webhook_events
        WHERE organisation_id = ${orgId} ORDER BY occurred_at, type`
  )

describe("inbound ingest", { timeout: 180_000 }, () => {
  withApp({ label: "inbound_ingest", config: { clock: "test" } })((it) => {
    it.effect("joins the parts of every form, in any order, a part repeated, into one message", () =>
      Effect.gen(function* () {
        const app = yield* App
        for (const [i, form] of partForms.entries()) {
          const from = newSender()
          const parts = partsOf(longText, from, "1111", form, 200 + i)
          // last part first, the first part twice
          yield* receive([...parts].reverse())
          yield* receive(parts.slice(0, 1))
          yield* app.advance(1000)
          const rows = yield* inboundFrom(from)
          expect(rows, form).toHaveLength(1)
          expect(rows[0]).toMatchObject({
            text: longText,
            toNumber: "1111",
            incomplete: false,
            segments: form === "payload" ? 1 : parts.length,
            organisationId: null,
            routed: false
          })
        }
      })
    )

    it.effect("makes a message still missing parts 10 minutes after its first, incomplete", () =>
      Effect.gen(function* () {
        const app = yield* App
        const from = newSender()
        const parts = partsOf(longText, from, "1111", "sar", 77)
        expect(parts.length).toBeGreaterThan(2)
        yield* receive([parts[0]!, parts[2]!])
        yield* app.advance(9 * minute)
        expect(yield* inboundFrom(from)).toHaveLength(0)
        yield* app.advance(minute)
        const rows = yield* inboundFrom(from)
        expect(rows).toHaveLength(1)
        expect(rows[0]).toMatchObject({ incomplete: true, segments: 2 })
      })
    )

    it.effect("stores a whole message sent again (its acknowledgement lost) once", () =>
      Effect.gen(function* () {
        const app = yield* App
        const from = newSender()
        const parts = partsOf("Eny", from, "1111")
        yield* receive(parts)
        yield* app.advance(1000)
        yield* receive(parts)
        yield* app.advance(1000)
        expect(yield* inboundFrom(from)).toHaveLength(1)
      })
    )

    it.effect("routes to the organisation the number is dedicated to, and applies STOP and START there", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        yield* createEndpoint(apiKey, { url: "http://127.0.0.1:9/hook" })
        yield* hold(orgId, "4242")
        const from = newSender()
        yield* receive(partsOf("Salama", from, "4242"))
        yield* receive(partsOf("Stop!", from, "4242"))
        yield* app.advance(1000)
        const rows = yield* inboundFrom(from)
        expect(rows.map((r) => [r.organisationId, r.keyword, r.text])).toEqual([
          [orgId, null, "Salama"],
          [orgId, "STOP", "Stop!"]
        ])
        expect(yield* optOutsOf(orgId)).toEqual([{ phoneNumber: from, source: "sms", inboundMessageId: rows[1]!.id }])
        yield* receive(partsOf("start", from, "4242"))
        yield* app.advance(1000)
        expect(yield* optOutsOf(orgId)).toEqual([])
        const events = yield* eventsOf(orgId)
        expect(events.map((e) => e.type).sort()).toEqual([
          "contact.opted_in",
          "contact.opted_out",
          "message.received",
          "message.received",
          "message.received"
        ])
        const received = events.filter((e) => e.type === "message.received").map((e) => e.message)
        expect(received.find((m) => m.id === rows[0]!.id)).toMatchObject({
          id: rows[0]!.id,
          from,
          to: "4242",
          text: "Salama",
          keyword: null,
          segments: 1,
          incomplete: false,
          // read back through the client, whose column names (and JSON keys) come in camel case
          inReplyTo: null
        })
        expect(events.find((e) => e.type === "contact.opted_out")?.message).toEqual({
          phoneNumber: from,
          source: "sms",
          inboundMessageId: rows[1]!.id
        })
      })
    )

    it.effect("routes a shared number by keyword, STOP <KEYWORD> like <KEYWORD> STOP", () =>
      Effect.gen(function* () {
        const app = yield* App
        const promo = yield* app.newOrg()
        const info = yield* app.newOrg()
        yield* hold(promo.orgId, "5555", "PROMO")
        yield* hold(info.orgId, "5555", "INFO")
        const from = newSender()
        yield* receive(partsOf("Prömo yes please", from, "5555"))
        yield* receive(partsOf("STOP info", from, "5555"))
        yield* receive(partsOf("hello", from, "5555"))
        yield* app.advance(1000)
        const rows = yield* inboundFrom(from)
        expect(rows.map((r) => [r.organisationId, r.keyword])).toEqual([
          [promo.orgId, "PROMO"],
          [info.orgId, "STOP"],
          [null, null]
        ])
        expect((yield* optOutsOf(info.orgId)).map((o) => o.phoneNumber)).toEqual([from])
        expect(yield* optOutsOf(promo.orgId)).toEqual([])
      })
    )

    it.effect("routes a reply to the organisation that last sent to its sender under that number", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/7777`, { active: true })).status).toBe(200)
        const from = newSender()
        const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
          token: apiKey,
          headers: { "idempotency-key": `reply-${from}` },
          body: { to: from, text: "Manao ahoana", sender_name: "7777" }
        })
        expect(sent.status, sent.text).toBe(201)
        yield* receive(partsOf("Tsara", from, "7777"))
        // the same sender under a number the organisation never sent from: unrouted
        yield* receive(partsOf("Tsara", from, "7778"))
        yield* app.advance(1000)
        const rows = yield* inboundFrom(from)
        expect(rows.map((r) => [r.organisationId, r.inReplyTo, r.routed])).toEqual([
          [orgId, sent.body.id, true],
          [null, null, false]
        ])
      })
    )
  })
})
