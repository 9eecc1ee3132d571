/**
 * The adapter against an SMSC that sends what real SMSCs send, legal and not (issue "SMPP in the
 * wild"): PDUs it does not use, a PDU shorter than its header, answers of the wrong kind, ids it
 * cannot keep, receipts in message_payload or data_sm, a bad receipt among good ones in one
 * write; and how soon it binds again after a loss.
 */
import { Effect, Fiber, Redacted } from "effect"
import smpp from "smpp"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { testSettings, FakeInbox, submission, until, withProvider } from "./support.ts"
import { RawSmsc, rawPdu, receiptPdu } from "../../support/RawSmsc.ts"
import type { RouteSettings } from "../../../src/config/SmppSettings.ts"

let smsc: RawSmsc
beforeEach(async () => {
  smsc = await RawSmsc.start()
})
afterEach(() => smsc.close())

const route = (): RouteSettings => ({
  name: "raw",
  endpoint: { host: "127.0.0.1", port: smsc.port, systemId: "sim", password: Redacted.make("sim") },
  prefixes: ["*"],
  window: 10,
  mps: 0,
  binds: 1,
  msgIdType: "exact"
})

const bound = () => until("the bind", () => smsc.binds >= 1)

describe("PDUs the adapter does not use", () => {
  it("leaves alert_notification and outbind unanswered and keeps the connection; nacks requests an ESME is not sent", async () => {
    const result = await withProvider(testSettings([route()]), new FakeInbox(), (p) =>
      Effect.gen(function* () {
        yield* bound()
        const alert = new smpp.PDU("alert_notification", { source_addr: "261340000001", esme_addr: "DEMO" })
        const outbind = new smpp.PDU("outbind", { system_id: "sim", password: "sim" })
        const query = new smpp.PDU("query_sm", { message_id: "1" })
        const [, , querySeq] = smsc.send(alert, outbind, query)
        // an unknown command id, and a request of a known but unused kind
        smsc.send(rawPdu(0x0000_0999, 77), rawPdu(0x0000_0004, 78))
        yield* until("three nacks", () => smsc.answersTo([querySeq!, 77, 78]).length === 3)
        return { answers: smsc.answersTo([querySeq!, 77, 78]), after: yield* p.submit(submission("+261341234567")) }
      })
    )
    expect(result.answers.map((a) => [a.command, a.command_status])).toEqual([
      ["generic_nack", 0x03],
      ["generic_nack", 0x03],
      ["generic_nack", 0x03]
    ])
    expect(result.after).toEqual({ _tag: "Accepted", providerRef: "raw:1" })
    expect(smsc.connections).toHaveLength(1)
    // nothing answered the alert and the outbind
    expect(
      smsc.received.filter((p) => p.command === "alert_notification_resp" || p.command === "outbind_resp")
    ).toEqual([])
  })

  it("drops the connection at once on a PDU shorter than its header, binds again, and sends", async () => {
    const result = await withProvider(testSettings([route()]), new FakeInbox(), (p) =>
      Effect.gen(function* () {
        yield* bound()
        const start = performance.now()
        smsc.send(Buffer.from([0, 0, 0, 4]))
        yield* until("the connection dropped", () => smsc.connections[0]!.closed, 2000)
        const droppedMs = performance.now() - start
        yield* until("a second bind", () => smsc.binds === 2, 3000)
        return { droppedMs, after: yield* p.submit(submission("+261341234567")) }
      })
    )
    expect(result.droppedMs).toBeLessThan(1000)
    expect(result.after._tag).toBe("Accepted")
  })

  it("answers a body it cannot decode with generic_nack and keeps reading the stream", async () => {
    const inbox = new FakeInbox()
    const result = await withProvider(testSettings([route()]), inbox, (p) =>
      Effect.gen(function* () {
        yield* bound()
        // a receipt whose last TLV (message_state) is cut after its length: the package cannot read it
        const whole = receiptPdu({ id: "cut-1", source: "261341234567" }).toBuffer()
        const body = Buffer.concat([whole.subarray(16), Buffer.from([0x04, 0x27, 0x00, 0x01])])
        const broken = rawPdu(0x0000_0005, 91, body)
        const [good] = smsc.send(broken, receiptPdu({ id: "ok-1", source: "261341234567" }))
        yield* until("both answered", () => smsc.answersTo([91, good!]).length === 2)
        return { answers: smsc.answersTo([91, good!]), after: yield* p.submit(submission("+261341234567")) }
      })
    )
    expect(result.answers.map((a) => [a.command, a.command_status])).toEqual([
      ["generic_nack", 0x08],
      ["deliver_sm_resp", 0]
    ])
    expect(inbox.receipts.map((r) => r.providerRef)).toEqual(["raw:ok-1"])
    expect(result.after._tag).toBe("Accepted")
    expect(smsc.connections).toHaveLength(1)
  })
})

describe("answers", () => {
  it("matches a response by sequence number and command id: a deliver_sm_resp with a submit's sequence settles nothing", async () => {
    smsc.onSubmit = () => "silent"
    const result = await withProvider(testSettings([route()], { responseTimeoutMs: 3000 }), new FakeInbox(), (p) =>
      Effect.gen(function* () {
        yield* bound()
        const fiber = yield* Effect.forkChild(p.submit(submission("+261341234567")))
        yield* until("the submit", () => smsc.received.some((r) => r.command === "submit_sm"))
        const submit = smsc.received.find((r) => r.command === "submit_sm")!
        smsc.send(new smpp.PDU("deliver_sm_resp", { sequence_number: submit.sequence_number, message_id: "" }))
        smsc.send(new smpp.PDU("submit_sm_resp", { sequence_number: submit.sequence_number, message_id: "A-77" }))
        return yield* Fiber.join(fiber)
      })
    )
    expect(result).toEqual({ _tag: "Accepted", providerRef: "raw:A-77" })
  })

  it("makes only the message whose answer carries an id it cannot keep unknown: empty, 5,000 characters, a control character", async () => {
    const bad = new Map([
      ["+261340000101", ""],
      ["+261340000102", "9".repeat(5000)],
      ["+261340000103", "12\u000134"],
      ["+261340000104", "12é34"]
    ])
    smsc.onSubmit = (pdu) => {
      const to = `+${pdu.destination_addr}`
      return bad.has(to) ? { status: 0, messageId: bad.get(to)! } : { status: 0, messageId: `ok-${smsc.nextId++}` }
    }
    const numbers = [...bad.keys(), ...Array.from({ length: 20 }, (_, i) => `+2613410000${String(i).padStart(2, "0")}`)]
    const results = await withProvider(testSettings([route()]), new FakeInbox(), (p) =>
      Effect.forEach(numbers, (to) => p.submit(submission(to)), { concurrency: "unbounded" })
    )
    results.forEach((r, i) => {
      if (bad.has(numbers[i]!))
        expect(r, numbers[i]).toEqual({
          _tag: "Unknown",
          reason: expect.stringMatching(/^raw accepted it with an invalid message_id /)
        })
      else expect(r._tag, numbers[i]).toBe("Accepted")
    })
  })
})

describe("receipts", () => {
  it("reads a receipt from message_payload, in a deliver_sm or a data_sm, with its number and dates", async () => {
    const inbox = new FakeInbox()
    await withProvider(testSettings([route()]), inbox, () =>
      Effect.gen(function* () {
        yield* bound()
        const [a, b] = smsc.send(
          receiptPdu({
            id: "P-1",
            source: "261341234567",
            inPayload: true,
            submitDate: "2611240900",
            doneDate: "2611240901"
          }),
          receiptPdu({ id: "P-2", source: "0341234568", stat: "UNDELIV", dataSm: true })
        )
        yield* until("both acknowledged", () => smsc.answersTo([a!, b!]).length === 2)
        expect(smsc.answersTo([a!, b!]).map((r) => [r.command, r.command_status])).toEqual([
          ["deliver_sm_resp", 0],
          ["data_sm_resp", 0]
        ])
      })
    )
    expect(inbox.receipts).toEqual([
      {
        providerRef: "raw:P-1",
        outcome: "delivered",
        occurredAt: new Date(Date.UTC(2026, 10, 24, 9, 1)),
        recipient: "+261341234567",
        submittedAt: new Date(Date.UTC(2026, 10, 24, 9, 0))
      },
      {
        providerRef: "raw:P-2",
        outcome: "undeliverable",
        occurredAt: expect.any(Date),
        recipient: "+261341234568",
        submittedAt: expect.any(Date)
      }
    ])
  })

  it("one unreadable receipt among 21 good ones in one write: the 21 are stored and acknowledged, the bad one acknowledged and dropped", async () => {
    const inbox = new FakeInbox()
    await withProvider(testSettings([route()]), inbox, () =>
      Effect.gen(function* () {
        yield* bound()
        const good = Array.from({ length: 21 }, (_, i) =>
          receiptPdu({ id: `G-${i}`, source: "261341234567", tlvs: i % 2 === 0 })
        )
        const bad = receiptPdu({ id: "12\u000034", source: "261341234567", ucs2: true })
        const sequences = smsc.send(...good.slice(0, 10), bad, ...good.slice(10))
        yield* until("22 answers", () => smsc.answersTo(sequences).length === 22)
        expect(smsc.answersTo(sequences).map((r) => r.command_status)).toEqual(Array(22).fill(0))
      })
    )
    expect(inbox.receipts.map((r) => r.providerRef).sort()).toEqual(
      Array.from({ length: 21 }, (_, i) => `raw:G-${i}`).sort()
    )
  })
})

describe("reconnection", () => {
  it("binds again 0.5 s after a loss, however short-lived the bind was and however many losses came before", async () => {
    const timing = {
      enquireLinkIntervalMs: 30_000,
      reconnectInitialMs: 500,
      reconnectMaxMs: 30_000,
      throttleInitialMs: 20,
      throttleMaxMs: 200
    }
    const lossToBindMs = await withProvider(testSettings([route()], { timing }), new FakeInbox(), () =>
      Effect.gen(function* () {
        yield* bound()
        // binds that lived a moment each, lost over and over
        for (let loss = 1; loss <= 4; loss++) {
          yield* Effect.sleep(100)
          smsc.dropConnections()
          yield* until("the next bind", () => smsc.binds === loss + 1, 3000)
        }
        const lostAt = performance.now()
        smsc.dropConnections()
        yield* until("the next bind", () => smsc.binds === 6, 10_000)
        return performance.now() - lostAt
      })
    )
    expect(lossToBindMs).toBeGreaterThanOrEqual(450)
    expect(lossToBindMs).toBeLessThan(1500)
  })

  it("a send waiting for a bind waits up to its own deadline, however long the outage has lasted, and is sent once the SMSC is back", async () => {
    const timing = {
      enquireLinkIntervalMs: 30_000,
      reconnectInitialMs: 100,
      reconnectMaxMs: 30_000,
      throttleInitialMs: 20,
      throttleMaxMs: 200
    }
    const result = await withProvider(
      testSettings([route()], { responseTimeoutMs: 1000, timing }),
      new FakeInbox(),
      (p) =>
        Effect.gen(function* () {
          yield* bound()
          // the SMSC goes away for 1.8 s; the send comes when it has been down longer than a deadline
          const port = smsc.port
          yield* Effect.promise(() => smsc.close())
          yield* Effect.sleep(1500)
          const fiber = yield* Effect.forkChild(p.submit(submission("+261341234567")))
          yield* Effect.sleep(300)
          smsc = yield* Effect.promise(() => RawSmsc.start(port))
          smsc.nextId = 500
          return yield* Fiber.join(fiber)
        })
    )
    expect(result).toEqual({ _tag: "Accepted", providerRef: "raw:500" })
  })
})
