/**
 * The whole service (SMS_PROVIDER=smpp, real loops) against a raw SMSC that misbehaves as real
 * ones do: one answer whose id cannot be kept among 200 sends, one unreadable receipt among 21
 * good ones in one write, ids given again after a restart, a receipt for a message whose answer
 * was lost, and done dates written to the minute.
 */
import { afterAll, beforeAll, expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { RouteSettings } from "../../../src/config/SmppSettings.ts"
import { create } from "../../support/Messages.ts"
import { RawSmsc, receiptDate, receiptPdu } from "../../support/RawSmsc.ts"
import { adminToken, App, backend, withApp } from "../../support/TestApp.ts"
import { type MessageFacts, settled, smppApp } from "./service.ts"
import { until } from "./support.ts"

let smsc: RawSmsc
let route: RouteSettings

beforeAll(async () => {
  smsc = await RawSmsc.start()
  route = {
    name: "raw",
    endpoint: { host: "127.0.0.1", port: smsc.port, systemId: "sim", password: Redacted.make("sim") },
    prefixes: ["*"],
    window: 50,
    mps: 0,
    binds: 1,
    msgIdType: "exact"
  }
})
afterAll(async () => {
  await smsc?.close()
})

/** Once the app is up: its bind to the raw SMSC. */
const bound = Effect.gen(function* () {
  yield* (yield* App).call("GET", "/health")
  yield* until("the bind", () => smsc.binds >= 1, 10_000)
})

const number = (block: number, i: number) => `+26134${block}${String(i).padStart(6, "0")}`

/** Immediate sends to `numbers`, all at once; their replies in order. */
const sendAll = (apiKey: string, numbers: ReadonlyArray<string>, text: string) =>
  Effect.all(
    numbers.map((to) => create(apiKey, { to, text })),
    { concurrency: "unbounded" }
  )

const transitionsOf = (facts: ReadonlyMap<string, MessageFacts>, to: string) =>
  [...facts.values()].find((m) => m.to === to)!.transitions

withApp(
  smppApp("smpp_hostile", () => [route], { responseTimeoutMs: 1500 }),
  bound
)(`the service against a misbehaving SMSC (${backend})`, (it) => {
  it.effect(
    "one answer with an id the service cannot keep (5,000 characters) makes only its message unknown; its 199 neighbours are sent",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 200 })
        const numbers = Array.from({ length: 200 }, (_, i) => number(1, i))
        const bad = numbers[117]!
        smsc.onSubmit = (pdu) => ({
          status: 0,
          messageId: `+${pdu.destination_addr}` === bad ? "9".repeat(5000) : `a-${smsc.nextId++}`
        })
        const replies = yield* sendAll(apiKey, numbers, "neighbours")
        smsc.onSubmit = () => ({ status: 0, messageId: String(smsc.nextId++) })
        const statuses = replies.map((r) => r.reply.status)
        expect(statuses.filter((s, i) => s !== 201 && numbers[i] !== bad)).toEqual([])
        expect(replies[117]!.reply.status).toBe(502)
        expect(replies[117]!.reply.body.error.code).toBe("provider_result_unknown")
        const facts = yield* settled(orgId, (m) => m.status === "accepted" || m.status === "unknown")
        expect([...facts.values()].filter((m) => m.status === "unknown").map((m) => m.to)).toEqual([bad])
      })
  )

  it.effect(
    "one unreadable receipt among 21 good ones in one write: the 21 are applied, all 22 acknowledged with status 0",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 21 })
        const numbers = Array.from({ length: 21 }, (_, i) => number(2, i))
        yield* sendAll(apiKey, numbers, "one write")
        const good = yield* idsOf(orgId)
        const sequences = smsc.send(
          ...numbers.slice(0, 10).map((to) => receiptPdu({ id: good.get(to)!, source: to })),
          receiptPdu({ id: "12\u000034", source: numbers[0]!, ucs2: true }),
          ...numbers.slice(10).map((to) => receiptPdu({ id: good.get(to)!, source: to }))
        )
        yield* until("22 answers", () => smsc.answersTo(sequences).length === 22, 10_000)
        expect(smsc.answersTo(sequences).map((a) => a.command_status)).toEqual(Array(22).fill(0))
        const facts = yield* settled(orgId, (m) => m.status === "delivered")
        expect(facts.size).toBe(21)
      })
  )

  it.effect(
    "an SMSC that restarts gives ids again: every receipt reaches its own message, old ones are left alone",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const before = Array.from({ length: 5 }, (_, i) => number(3, i))
        const after = Array.from({ length: 5 }, (_, i) => number(4, i))
        smsc.nextId = 1_000_000_000
        yield* sendAll(apiKey, before, "before the restart")
        const first = yield* idsOf(orgId)
        smsc.send(...before.map((to) => receiptPdu({ id: first.get(to)!, source: to })))
        yield* settled(orgId, (m) => m.status === "delivered", { what: "the first five delivered" })
        // restarted: the same ids again, for other numbers
        smsc.nextId = 1_000_000_000
        yield* sendAll(apiKey, after, "after the restart")
        const second = yield* idsOf(orgId)
        // the same five ids again (in whichever order the sends reached the SMSC)
        expect(after.map((to) => second.get(to)).sort()).toEqual(before.map((to) => first.get(to)).sort())
        smsc.send(...after.map((to) => receiptPdu({ id: second.get(to)!, source: to, stat: "UNDELIV" })))
        const facts = yield* settled(orgId, (m) => m.status === "delivered" || m.status === "undeliverable")
        for (const to of before)
          expect(transitionsOf(facts, to), to).toEqual([
            "->processing@admission",
            "processing>accepted@provider",
            "accepted>delivered@receipt"
          ])
        for (const to of after)
          expect(transitionsOf(facts, to), to).toEqual([
            "->processing@admission",
            "processing>accepted@provider",
            "accepted>undeliverable@receipt"
          ])
      })
  )

  it.effect(
    "a message whose answer was lost (the connection dropped) is matched to its receipt: unknown, then accepted and delivered",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 1 })
        const to = number(5, 1)
        smsc.onSubmit = (pdu, connection) => {
          // taken, then the connection drops before the answer
          if (`+${pdu.destination_addr}` === to) {
            setTimeout(() => connection.socket.destroy(), 10)
            return "silent"
          }
          return { status: 0, messageId: String(smsc.nextId++) }
        }
        const { reply } = yield* create(apiKey, { to, text: "answer lost" })
        smsc.onSubmit = () => ({ status: 0, messageId: String(smsc.nextId++) })
        expect(reply.status, reply.text).toBe(502)
        yield* until("the bind again", () => smsc.connections.some((c) => c.bound && !c.closed), 10_000)
        smsc.send(receiptPdu({ id: "lost-77", source: to, submitDate: receiptDate(new Date()) }))
        const facts = yield* settled(orgId, (m) => m.status === "delivered")
        expect(transitionsOf(facts, to)).toEqual([
          "->processing@admission",
          "processing>unknown@provider",
          "unknown>accepted@matched_receipt",
          "accepted>delivered@receipt"
        ])
      })
  )

  it.effect("a done date written to the minute never puts the delivery before the acceptance", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 1 })
      const to = number(6, 1)
      const { id } = yield* create(apiKey, { to, text: "to the minute" })
      const smscId = (yield* idsOf(orgId)).get(to)!
      smsc.send(receiptPdu({ id: smscId, source: to, doneDate: receiptDate(new Date()) }))
      yield* settled(orgId, (m) => m.status === "delivered")
      const message = yield* app.call("GET", `/admin/v1/organizations/${orgId}/messages/${id}`, { token: adminToken })
      const acceptedAt = message.body.timeline.find((t: { to_status: string }) => t.to_status === "accepted").at
      expect(Date.parse(message.body.delivery_time)).toBeGreaterThanOrEqual(Date.parse(acceptedAt))
    })
  )
})

/** The SMSC id of each of the organisation's accepted messages, by number (from the provider refs the service stored). */
const idsOf = (orgId: string) =>
  Effect.gen(function* () {
    const rows = yield* Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql<{ toNumber: string; providerMessageId: string }>`SELECT to_number, provider_message_id FROM messages
        WHERE organisation_id = ${orgId} AND provider_message_id IS NOT NULL`
    )
    return new Map(rows.map((r) => [r.toNumber, r.providerMessageId.slice("raw:".length)]))
  })
