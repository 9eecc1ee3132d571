/**
 * Mobile-originated messages over SMPP (docs/two-way.md): each part
 * read from the octets the SMSC sent (any data_coding, its header or SAR TLVs, or message_payload),
 * the sender written as E.164, and handed to the inbox before its deliver_sm_resp: status 0 once
 * stored, 0x64 when it cannot be, so that the SMSC sends it again.
 */
import { Effect, Redacted } from "effect"
import smpp from "smpp"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { RouteSettings } from "../../../src/config/SmppSettings.ts"
import { RawSmsc } from "../../support/RawSmsc.ts"
import { moPdus } from "../../../simulator/smsc/MoParts.ts"
import { FakeInbox, testSettings, until, withProvider } from "./support.ts"

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

const mo = (fields: Record<string, unknown>) =>
  new smpp.PDU("deliver_sm", {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: "261340000010",
    dest_addr_ton: 0,
    dest_addr_npi: 0,
    destination_addr: "4242",
    esm_class: 0,
    ...fields
  })

describe("mobile-originated deliver_sm", () => {
  it("hands each part to the inbox as the SMSC sent it, and acknowledges it once stored", async () => {
    const inbox = new FakeInbox()
    const answers = await withProvider(testSettings([route()]), inbox, () =>
      Effect.gen(function* () {
        yield* until("the bind", () => smsc.binds >= 1)
        const sequences = smsc.send(
          // IA5 and Latin-1 octets, which the smpp package would read as GSM
          mo({ data_coding: 1, short_message: Buffer.from("OK@", "latin1") }),
          mo({
            data_coding: 3,
            short_message: Buffer.from([0x41, 0xe9]),
            source_addr_ton: 2,
            source_addr: "0340000011"
          }),
          mo({ data_coding: 4, short_message: Buffer.from([0xde, 0xad]) }),
          ...moPdus("a".repeat(200), "udh16", 513).map((p) =>
            mo({ ...p, short_message: Buffer.from(p.short_message) })
          ),
          ...moPdus("b".repeat(200), "sar", 9).map((p) => mo({ ...p, short_message: Buffer.from(p.short_message) })),
          ...moPdus("c".repeat(200), "payload", 0).map((p) =>
            mo({ ...p, short_message: Buffer.alloc(0), message_payload: Buffer.from(p.message_payload!) })
          )
        )
        yield* until("every answer", () => smsc.answersTo(sequences).length === sequences.length)
        return smsc.answersTo(sequences)
      })
    )
    expect(answers.map((a) => [a.command, a.command_status])).toEqual(answers.map(() => ["deliver_sm_resp", 0]))
    const parts = inbox.parts.map((p) => ({ ...p, octets: Buffer.from(p.octets).toString("latin1") }))
    expect(parts[0]).toEqual({
      source: "raw",
      from: "+261340000010",
      to: "4242",
      dataCoding: 1,
      position: undefined,
      octets: "OK@"
    })
    expect(parts[1]).toMatchObject({ from: "+261340000011", dataCoding: 3, octets: "Aé" })
    expect(parts[2]).toMatchObject({ dataCoding: 4, octets: "\xde\xad" })
    expect(parts.slice(3, 5).map((p) => p.position)).toEqual([
      { ref: 513, total: 2, seq: 1 },
      { ref: 513, total: 2, seq: 2 }
    ])
    expect(parts.slice(5, 7).map((p) => p.position)).toEqual([
      { ref: 9, total: 2, seq: 1 },
      { ref: 9, total: 2, seq: 2 }
    ])
    expect(parts.slice(3, 7).map((p) => p.octets.length)).toEqual([153, 47, 153, 47])
    expect(parts[7]).toMatchObject({ position: undefined, octets: "c".repeat(200) })
  })

  it("answers 0x64 while the inbox cannot store a part, and 0 once it is sent again and stored", async () => {
    const inbox = new FakeInbox()
    inbox.refuseParts = 1
    const answers = await withProvider(testSettings([route()]), inbox, () =>
      Effect.gen(function* () {
        yield* until("the bind", () => smsc.binds >= 1)
        const [first] = smsc.send(mo({ data_coding: 0, short_message: Buffer.from("STOP") }))
        yield* until("the first answer", () => smsc.answersTo([first!]).length === 1)
        const [again] = smsc.send(mo({ data_coding: 0, short_message: Buffer.from("STOP") }))
        yield* until("the second answer", () => smsc.answersTo([again!]).length === 1)
        return [...smsc.answersTo([first!]), ...smsc.answersTo([again!])]
      })
    )
    expect(answers.map((a) => a.command_status)).toEqual([0x64, 0])
    expect(inbox.parts).toHaveLength(1)
  })
})
