/**
 * What reaches the SMSC: addresses with their TON/NPI, the encoding chosen as the segment count
 * chooses it, concatenated parts cut where the count cuts and reassembled to the exact text;
 * ids normalised by msg_id_type so an answer and its receipt give the same ref; and numbers
 * routed by prefix across several SMSCs.
 */
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { countSegments } from "../../../src/domain/Segments.ts"
import type { SubmitResult } from "../../../src/provider/Provider.ts"
import type { MsgIdType } from "../../../src/config/SmppSettings.ts"
import { FakeInbox, routeTo, startSmsc, submission, testSettings, until, withProvider } from "./support.ts"

const started: Array<Smsc> = []
const smscFor = async (): Promise<Smsc> => {
  const smsc = await startSmsc()
  started.push(smsc)
  return smsc
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.dispose()))
})

const refOf = (r: SubmitResult): string =>
  r._tag === "Accepted" ? r.providerRef : expect.fail(`not accepted: ${JSON.stringify(r)}`)

describe("PDU mapping", () => {
  it("sends an alphanumeric sender as TON 5 NPI 0, a numeric one as TON 1 NPI 1, the number without + as TON 1 NPI 1, asking for a receipt", async () => {
    const smsc = await smscFor()
    await withProvider(testSettings([routeTo(smsc)]), new FakeInbox(), (p) =>
      Effect.all([
        p.submit(submission(testNumbers.acceptedNoReceipt, "a", "DEMO")),
        p.submit(submission(testNumbers.acceptedNoReceipt, "b", "+261341234567"))
      ])
    )
    expect(
      smsc.received.map(({ from, sourceTon, sourceNpi, to, destTon, destNpi, registeredDelivery, esmClass }) => ({
        from,
        sourceTon,
        sourceNpi,
        to,
        destTon,
        destNpi,
        registeredDelivery,
        esmClass
      }))
    ).toEqual([
      {
        from: "DEMO",
        sourceTon: 5,
        sourceNpi: 0,
        to: testNumbers.acceptedNoReceipt,
        destTon: 1,
        destNpi: 1,
        registeredDelivery: 1,
        esmClass: 0
      },
      {
        from: "261341234567",
        sourceTon: 1,
        sourceNpi: 1,
        to: testNumbers.acceptedNoReceipt,
        destTon: 1,
        destNpi: 1,
        registeredDelivery: 1,
        esmClass: 0
      }
    ])
  })

  it("sends a GSM-7 text with escape characters in two concatenated parts, reassembled to the exact text with data_coding 0", async () => {
    const smsc = await smscFor()
    const text = `Prix 10€ [promo] {code} ~ ^ | \\ ${"a".repeat(120)} @£$ fin ${"€".repeat(20)}`
    expect(countSegments(text)).toMatchObject({ encoding: "GSM-7", segments: 2 })
    const [result] = await withProvider(testSettings([routeTo(smsc)]), new FakeInbox(), (p) =>
      Effect.all([p.submit({ ...submission(testNumbers.acceptedNoReceipt, text), segments: 2 })])
    )
    expect(result!._tag).toBe("Accepted")
    expect(smsc.messages).toMatchObject([{ text, dataCoding: 0, parts: 2 }])
    const [one, two] = smsc.received
    expect(one).toMatchObject({ esmClass: 0x40, dataCoding: 0, concatenation: { total: 2, seq: 1 } })
    expect(two).toMatchObject({
      esmClass: 0x40,
      dataCoding: 0,
      concatenation: { total: 2, seq: 2, ref: one!.concatenation!.ref }
    })
    // the ref is the first part's id
    expect(refOf(result!)).toBe(`smsc:${smsc.messages[0]!.ids[0]}`)
  })

  it("sends a UCS-2 text with emoji in two concatenated parts, reassembled to the exact text with data_coding 8", async () => {
    const smsc = await smscFor()
    const text = `Salama 😀 ô ${"ж".repeat(50)} 🇲🇬 ${"é".repeat(40)}`
    expect(countSegments(text)).toMatchObject({ encoding: "UCS-2", segments: 2 })
    await withProvider(testSettings([routeTo(smsc)]), new FakeInbox(), (p) =>
      p.submit({ ...submission(testNumbers.acceptedNoReceipt, text), segments: 2 })
    )
    expect(smsc.messages).toMatchObject([{ text, dataCoding: 8, parts: 2 }])
    expect(smsc.received.map((r) => r.text.length)).toEqual([67, text.length - 67])
  })

  it("gives two messages sent together different concatenation references", async () => {
    const smsc = await smscFor()
    const long = (c: string) => c.repeat(200)
    await withProvider(testSettings([routeTo(smsc)]), new FakeInbox(), (p) =>
      Effect.all(
        [
          p.submit(submission(testNumbers.acceptedNoReceipt, long("x"))),
          p.submit(submission(testNumbers.acceptedNoReceipt, long("y")))
        ],
        { concurrency: 2 }
      )
    )
    expect(smsc.messages.map((m) => m.text).sort()).toEqual([long("x"), long("y")])
  })
})

describe("msg_id_type", () => {
  const receiptAndAnswer = async (format: MsgIdType, configured: MsgIdType) => {
    const smsc = await smscFor()
    smsc.idFormat = format
    const inbox = new FakeInbox()
    return withProvider(testSettings([routeTo(smsc, { msgIdType: configured })]), inbox, (p) =>
      Effect.gen(function* () {
        const s = submission(testNumbers.delivered)
        const result = yield* p.submit(s)
        yield* until("the receipt", () => inbox.receipts.length === 1)
        const query = yield* p.query({ ...s, providerRef: refOf(result) })
        return { ref: refOf(result), receiptRef: inbox.receipts[0]!.providerRef, query }
      })
    )
  }

  it.each(["hex_resp_dec_receipt", "dec_resp_hex_receipt"] as const)(
    "%s: the answer's ref equals the receipt's, and query_sm finds it",
    async (kind) => {
      const { ref, receiptRef, query } = await receiptAndAnswer(kind, kind)
      expect(ref).toBe("smsc:1000000000")
      expect(receiptRef).toBe(ref)
      expect(query).toEqual({ _tag: "Accepted", providerRef: ref })
    }
  )

  it("without the right msg_id_type, the refs differ (which is why it exists)", async () => {
    const { ref, receiptRef } = await receiptAndAnswer("hex_resp_dec_receipt", "exact")
    expect(ref).toBe("smsc:3B9ACA00")
    expect(receiptRef).toBe("smsc:1000000000")
  })
})

describe("routing by prefix", () => {
  it("sends each number to the SMSC of its longest prefix, and fails a number no route serves before writing anything", async () => {
    const [telmaSmsc, orangeSmsc] = [await smscFor(), await smscFor()]
    const routes = [
      routeTo(telmaSmsc, { name: "telma", prefixes: ["+26134", "+26138"] }),
      routeTo(orangeSmsc, { name: "orange", prefixes: ["+26132", "+26137", "+2613412"] })
    ]
    const results = await withProvider(testSettings(routes), new FakeInbox(), (p) =>
      Effect.forEach(
        ["+261340000006", "+261380000006", "+261320000006", "+261370000006", "+261341200006", "+261330000006"],
        (to) => p.submit(submission(to, `to ${to}`))
      )
    )
    expect(results.slice(0, 5).map((r) => refOf(r).split(":")[0])).toEqual([
      "telma",
      "telma",
      "orange",
      "orange",
      "orange"
    ])
    expect(results[5]).toEqual({ _tag: "Unreachable", reason: "no route: no SMSC serves +26133*****06" })
    expect(telmaSmsc.received.map((r) => r.to)).toEqual(["+261340000006", "+261380000006"])
    expect(orangeSmsc.received.map((r) => r.to)).toEqual(["+261320000006", "+261370000006", "+261341200006"])
  })
})
