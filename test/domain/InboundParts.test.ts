/**
 * An inbound message's text from its parts (src/domain/InboundParts.ts, DataCoding.ts,
 * InboundAddress.ts): every form of part and every order of arrival, repeats included, give back
 * the text that was sent.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeText } from "../../src/domain/DataCoding.ts"
import { isInboundNumber, recipientOf, senderOf } from "../../src/domain/InboundAddress.ts"
import { joinParts, partOf } from "../../src/domain/InboundParts.ts"
import { encodeSegments } from "../../src/domain/Segments.ts"
import { moPdus, partForms, shuffled } from "../../simulator/smsc/MoParts.ts"

const bytes = (...xs: Array<number>) => Uint8Array.from(xs)

/** The text the service reads from these PDUs, as it stores and joins them. */
const received = (pdus: ReturnType<typeof moPdus>) => {
  const parts = pdus.map((p) => {
    const part = partOf({
      hasHeader: (p.esm_class & 0x40) !== 0,
      shortMessage: p.short_message,
      messagePayload: p.message_payload,
      sar: { refNum: p.sar_msg_ref_num, totalSegments: p.sar_total_segments, segmentSeqnum: p.sar_segment_seqnum }
    })
    if (part === undefined) throw new Error("unreadable part")
    return part
  })
  const total = parts[0]!.position?.total ?? 1
  const joined = joinParts(
    total,
    parts.map((p) => ({ seq: p.position?.seq ?? 1, octets: p.octets }))
  )
  return { ...joined, text: decodeText(pdus[0]!.data_coding, joined.octets).text }
}

describe("data coding", () => {
  it("reads GSM 7-bit one septet an octet, extension characters included", () => {
    expect(decodeText(0, encodeSegments("Salama é € {x}").segments[0]!).text).toBe("Salama é € {x}")
    expect(decodeText(0, bytes(0x48, 0x69, 0x1b)).text).toBe("Hi")
  })

  it("reads IA5, Latin-1 and UCS-2 big-endian", () => {
    expect(decodeText(1, bytes(0x4f, 0x4b)).text).toBe("OK")
    expect(decodeText(3, bytes(0x41, 0xe9)).text).toBe("Aé")
    expect(decodeText(8, bytes(0x04, 0x36, 0xd8, 0x3d, 0xde, 0x00))).toEqual({ text: "ж😀", hex: null })
    expect(decodeText(8, bytes(0xd8, 0x3d, 0x00, 0x41, 0x00)).text).toBe("\uFFFDA")
  })

  it("keeps any other coding as hex, with an empty text", () => {
    expect(decodeText(4, bytes(0xde, 0xad, 0x01))).toEqual({ text: "", hex: "dead01" })
    expect(decodeText(0xf5, bytes(0x00))).toEqual({ text: "", hex: "00" })
  })
})

describe("addresses", () => {
  it("writes the sender as E.164 from TON 1 and TON 2", () => {
    expect(senderOf(1, "261340000010")).toBe("+261340000010")
    expect(senderOf(1, "+261340000010")).toBe("+261340000010")
    expect(senderOf(2, "0340000010")).toBe("+261340000010")
    expect(senderOf(2, "340000010")).toBe("+261340000010")
    expect(senderOf(5, "TELMA")).toBe("TELMA")
  })

  it("keeps the number sent to as the number or short code it names", () => {
    expect(recipientOf(1, "261340000000")).toBe("+261340000000")
    expect(recipientOf(0, "4242")).toBe("4242")
    expect(isInboundNumber("4242")).toBe(true)
    expect(isInboundNumber("+261340000000")).toBe(true)
    expect(isInboundNumber("12")).toBe(false)
    expect(isInboundNumber("123456789")).toBe(false)
    expect(isInboundNumber("PROMO")).toBe(false)
  })
})

describe("reassembly", () => {
  it("reads a header whose concatenation element follows another element", () => {
    const part = partOf({
      hasHeader: true,
      shortMessage: bytes(0x08, 0x24, 0x01, 0x00, 0x00, 0x03, 0x07, 0x02, 0x01, 0x41)
    })
    expect(part?.position).toEqual({ ref: 7, total: 2, seq: 1 })
    expect(part?.octets).toEqual(bytes(0x41))
  })

  it("refuses a header that runs past the data, and takes a part 1 of 1 as a whole message", () => {
    expect(partOf({ hasHeader: true, shortMessage: bytes(0x05, 0x00, 0x03) })).toBeUndefined()
    expect(partOf({ hasHeader: true, shortMessage: bytes(0x05, 0x00, 0x03, 1, 1, 1, 0x41) })?.position).toBeUndefined()
  })

  it("counts a message missing a part as incomplete, with the parts it has", () => {
    const joined = joinParts(3, [
      { seq: 3, octets: bytes(3) },
      { seq: 1, octets: bytes(1) }
    ])
    expect(joined).toEqual({ octets: bytes(1, 3), segments: 2, complete: false })
  })

  it("property: each part form, in any order, a part repeated, reassembles to the same text", () => {
    const char = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,!?€{}éàжç😀")
    fc.assert(
      fc.property(
        fc.array(char, { minLength: 1, maxLength: 700 }).map((cs) => cs.join("")),
        fc.constantFrom(...partForms),
        fc.integer({ min: 0, max: 65535 }),
        fc.infiniteStream(fc.double({ min: 0, max: 0.999999, noNaN: true })),
        fc.option(fc.nat(10), { nil: undefined }),
        (text, form, ref, randoms, repeat) => {
          const pdus = moPdus(text, form, ref)
          const arrived = shuffled(pdus, () => randoms.next().value, repeat)
          const r = received(arrived)
          expect(r.complete).toBe(true)
          expect(r.text).toBe(text)
          expect(r.segments).toBe(form === "payload" ? 1 : pdus.length)
        }
      )
    )
  })
})
