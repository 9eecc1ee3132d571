/**
 * An inbound message's text from its parts (src/domain/InboundParts.ts, DataCoding.ts,
 * InboundAddress.ts): every form of part and every order of arrival, repeats included, give back
 * the text that was sent.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeText } from "../../src/domain/DataCoding.ts"
import { isInboundNumber, recipientOf, senderOf } from "../../src/domain/InboundAddress.ts"
import { joinParts, partOf, splitHeader } from "../../src/domain/InboundParts.ts"
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
        fc.array(char, { minLength: 1, maxLength: 700, size: "max" }).map((cs) => cs.join("")),
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

/** A header of one 8-bit concatenation element: part `seq` of `total` of message `ref`. */
const udh8 = (ref: number, total: number, seq: number) => [0x05, 0x00, 0x03, ref, total, seq]

describe("splitHeader", () => {
  it("reads an 8-bit concatenation element and splits the header off the text", () => {
    expect(splitHeader(bytes(...udh8(7, 2, 1), 0x48, 0x69))).toEqual({
      position: { ref: 7, total: 2, seq: 1 },
      rest: bytes(0x48, 0x69)
    })
  })

  it("reads a 16-bit concatenation element, its reference on two octets, high first", () => {
    expect(splitHeader(bytes(0x06, 0x08, 0x04, 0x12, 0x34, 3, 2, 0x48, 0x69))).toEqual({
      position: { ref: 0x1234, total: 3, seq: 2 },
      rest: bytes(0x48, 0x69)
    })
  })

  it("reads a header that fills the data, leaving no text", () => {
    expect(splitHeader(bytes(...udh8(7, 2, 2)))).toEqual({ position: { ref: 7, total: 2, seq: 2 }, rest: bytes() })
  })

  it("refuses data too short for the header length it starts with", () => {
    expect(splitHeader(bytes())).toBeUndefined()
    expect(splitHeader(bytes(0x06, 0x00, 0x03, 7, 2, 1))).toBeUndefined()
    expect(splitHeader(bytes(0x07, 0x00, 0x03, 7, 2, 1))).toBeUndefined()
    expect(splitHeader(bytes(0x01))).toBeUndefined()
  })

  it("refuses a header with an element running past it", () => {
    // the concatenation element's 5 octets in a header of 3
    expect(splitHeader(bytes(0x03, 0x00, 0x03, 7, 2, 1, 0x41))).toBeUndefined()
    // an element of length 5 starting at the header's last two octets, after a concatenation element
    expect(splitHeader(bytes(0x07, 0x00, 0x03, 7, 2, 1, 0x24, 0x05, 0x41, 0x42, 0x43, 0x44, 0x45))).toBeUndefined()
    // one octet too long
    expect(splitHeader(bytes(0x05, 0x00, 0x04, 7, 2, 1, 0x41, 0x42))).toBeUndefined()
  })

  it("ignores a last octet of the header too short to be an element", () => {
    expect(splitHeader(bytes(0x06, 0x00, 0x03, 7, 2, 1, 0x24, 0x48, 0x69))).toEqual({
      position: { ref: 7, total: 2, seq: 1 },
      rest: bytes(0x48, 0x69)
    })
  })

  it("reads the elements other than concatenation as no position", () => {
    expect(splitHeader(bytes(0x03, 0x24, 0x01, 0x00, 0x41))).toEqual({ position: undefined, rest: bytes(0x41) })
    expect(splitHeader(bytes(0x05, 0x0a, 0x03, 7, 2, 1, 0x41))).toEqual({ position: undefined, rest: bytes(0x41) })
    expect(splitHeader(bytes(0x06, 0x0a, 0x04, 0x12, 0x34, 3, 2, 0x41))).toEqual({
      position: undefined,
      rest: bytes(0x41)
    })
    expect(splitHeader(bytes(0x00, 0x41))).toEqual({ position: undefined, rest: bytes(0x41) })
  })

  it("reads a concatenation element of the wrong length as no position", () => {
    // IEI 0x00 with 4 octets, IEI 0x08 with 3 and with 5
    expect(splitHeader(bytes(0x06, 0x00, 0x04, 7, 2, 1, 9, 0x41))).toEqual({ position: undefined, rest: bytes(0x41) })
    expect(splitHeader(bytes(0x05, 0x08, 0x03, 0x12, 2, 1, 0x41))).toEqual({ position: undefined, rest: bytes(0x41) })
    expect(splitHeader(bytes(0x07, 0x08, 0x05, 0x12, 0x34, 3, 2, 9, 0x41))).toEqual({
      position: undefined,
      rest: bytes(0x41)
    })
  })

  it("takes the first concatenation element and ignores a second", () => {
    expect(splitHeader(bytes(0x0a, ...udh8(7, 2, 1).slice(1), ...udh8(9, 3, 3).slice(1), 0x41))?.position).toEqual({
      ref: 7,
      total: 2,
      seq: 1
    })
    expect(splitHeader(bytes(0x0b, ...udh8(7, 2, 1).slice(1), 0x08, 0x04, 0x00, 0x09, 3, 3, 0x41))?.position).toEqual({
      ref: 7,
      total: 2,
      seq: 1
    })
    expect(splitHeader(bytes(0x0b, 0x08, 0x04, 0x01, 0x00, 3, 3, ...udh8(7, 2, 1).slice(1), 0x41))?.position).toEqual({
      ref: 256,
      total: 3,
      seq: 3
    })
  })

  it("reads a position only where 1 <= seq <= total <= 255", () => {
    const positionOf = (ref: number, total: number, seq: number) => splitHeader(bytes(...udh8(ref, total, seq), 0x41))
    expect(positionOf(7, 1, 1)?.position).toEqual({ ref: 7, total: 1, seq: 1 })
    expect(positionOf(7, 2, 2)?.position).toEqual({ ref: 7, total: 2, seq: 2 })
    expect(positionOf(7, 255, 1)?.position).toEqual({ ref: 7, total: 255, seq: 1 })
    expect(positionOf(7, 255, 255)?.position).toEqual({ ref: 7, total: 255, seq: 255 })
    expect(positionOf(0, 2, 1)?.position).toEqual({ ref: 0, total: 2, seq: 1 })
    // an invalid position is none, the header still split off
    expect(positionOf(7, 0, 0)).toEqual({ position: undefined, rest: bytes(0x41) })
    expect(positionOf(7, 0, 1)?.position).toBeUndefined()
    expect(positionOf(7, 2, 0)?.position).toBeUndefined()
    expect(positionOf(7, 2, 3)?.position).toBeUndefined()
    expect(positionOf(7, 1, 2)?.position).toBeUndefined()
  })
})

describe("partOf", () => {
  const sar = (refNum: number | undefined, totalSegments: number | undefined, segmentSeqnum: number | undefined) => ({
    refNum,
    totalSegments,
    segmentSeqnum
  })

  it("takes a part without header or SAR as a whole message", () => {
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x48, 0x69) })).toEqual({
      position: undefined,
      octets: bytes(0x48, 0x69)
    })
    // header-like octets without the header flag are text
    expect(partOf({ hasHeader: false, shortMessage: bytes(...udh8(7, 2, 1)) })).toEqual({
      position: undefined,
      octets: bytes(...udh8(7, 2, 1))
    })
  })

  it("reads the position of the SAR TLVs", () => {
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: sar(300, 3, 2) })).toEqual({
      position: { ref: 300, total: 3, seq: 2 },
      octets: bytes(0x41)
    })
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: sar(0, 2, 2) })?.position).toEqual({
      ref: 0,
      total: 2,
      seq: 2
    })
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: sar(65535, 255, 255) })?.position).toEqual({
      ref: 65535,
      total: 255,
      seq: 255
    })
  })

  it("reads no position from SAR TLVs with a field missing", () => {
    const whole = { position: undefined, octets: bytes(0x41) }
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: sar(undefined, 3, 2) })).toEqual(whole)
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: sar(300, undefined, 2) })).toEqual(whole)
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: sar(300, 3, undefined) })).toEqual(whole)
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: {} })).toEqual(whole)
  })

  it("reads no position from SAR TLVs outside 1 <= seq <= total <= 255 or with a fractional reference", () => {
    const positionOf = (s: ReturnType<typeof sar>) => partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: s })
    expect(positionOf(sar(300, 256, 1))).toEqual({ position: undefined, octets: bytes(0x41) })
    expect(positionOf(sar(300, 256, 256))?.position).toBeUndefined()
    expect(positionOf(sar(300, 0, 1))?.position).toBeUndefined()
    expect(positionOf(sar(300, 3, 0))?.position).toBeUndefined()
    expect(positionOf(sar(300, 3, 4))?.position).toBeUndefined()
    expect(positionOf(sar(1.5, 3, 2))?.position).toBeUndefined()
    expect(positionOf(sar(Number.NaN, 3, 2))?.position).toBeUndefined()
  })

  it("takes a part 1 of 1 as a whole message, by header or SAR", () => {
    expect(partOf({ hasHeader: true, shortMessage: bytes(...udh8(7, 1, 1), 0x41) })).toEqual({
      position: undefined,
      octets: bytes(0x41)
    })
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), sar: sar(300, 1, 1) })).toEqual({
      position: undefined,
      octets: bytes(0x41)
    })
  })

  it("reads the header's concatenation element before the SAR TLVs", () => {
    expect(partOf({ hasHeader: true, shortMessage: bytes(...udh8(7, 2, 1), 0x41), sar: sar(300, 3, 3) })).toEqual({
      position: { ref: 7, total: 2, seq: 1 },
      octets: bytes(0x41)
    })
    // a header without one leaves the SAR TLVs to say
    expect(partOf({ hasHeader: true, shortMessage: bytes(0x03, 0x24, 0x01, 0x00, 0x41), sar: sar(300, 3, 3) })).toEqual(
      { position: { ref: 300, total: 3, seq: 3 }, octets: bytes(0x41) }
    )
  })

  it("refuses a part whose header cannot be read", () => {
    expect(partOf({ hasHeader: true, shortMessage: bytes() })).toBeUndefined()
    expect(
      partOf({ hasHeader: true, shortMessage: bytes(0x06, 0x00, 0x03, 7, 2, 1), sar: sar(300, 3, 3) })
    ).toBeUndefined()
  })

  it("reads message_payload only when short_message is empty", () => {
    expect(partOf({ hasHeader: false, shortMessage: bytes(), messagePayload: bytes(0x48, 0x69) })).toEqual({
      position: undefined,
      octets: bytes(0x48, 0x69)
    })
    expect(partOf({ hasHeader: false, shortMessage: bytes(0x41), messagePayload: bytes(0x48, 0x69) })).toEqual({
      position: undefined,
      octets: bytes(0x41)
    })
    expect(partOf({ hasHeader: false, shortMessage: bytes() })).toEqual({ position: undefined, octets: bytes() })
    expect(partOf({ hasHeader: false, shortMessage: bytes(), messagePayload: undefined })).toEqual({
      position: undefined,
      octets: bytes()
    })
  })

  it("reads the header of the message_payload it uses", () => {
    expect(partOf({ hasHeader: true, shortMessage: bytes(), messagePayload: bytes(...udh8(7, 2, 2), 0x41) })).toEqual({
      position: { ref: 7, total: 2, seq: 2 },
      octets: bytes(0x41)
    })
  })
})

describe("joinParts", () => {
  it("joins the parts in the order of their sequence numbers", () => {
    expect(
      joinParts(3, [
        { seq: 2, octets: bytes(2, 2) },
        { seq: 3, octets: bytes(3) },
        { seq: 1, octets: bytes(1) }
      ])
    ).toEqual({ octets: bytes(1, 2, 2, 3), segments: 3, complete: true })
  })

  it("counts a repeated part once, the first kept", () => {
    expect(
      joinParts(2, [
        { seq: 2, octets: bytes(0x58) },
        { seq: 1, octets: bytes(0x41) },
        { seq: 2, octets: bytes(0x59) }
      ])
    ).toEqual({ octets: bytes(0x41, 0x58), segments: 2, complete: true })
    expect(
      joinParts(3, [
        { seq: 1, octets: bytes(0x41) },
        { seq: 1, octets: bytes(0x42) }
      ])
    ).toEqual({ octets: bytes(0x41), segments: 1, complete: false })
  })

  it("leaves out a part whose sequence number is outside 1 to total", () => {
    expect(
      joinParts(2, [
        { seq: 0, octets: bytes(0) },
        { seq: 1, octets: bytes(1) },
        { seq: 3, octets: bytes(3) },
        { seq: 2, octets: bytes(2) }
      ])
    ).toEqual({ octets: bytes(1, 2), segments: 2, complete: true })
    expect(
      joinParts(2, [
        { seq: 1, octets: bytes(1) },
        { seq: 3, octets: bytes(3) }
      ])
    ).toEqual({ octets: bytes(1), segments: 1, complete: false })
    expect(
      joinParts(2, [
        { seq: 0, octets: bytes(0) },
        { seq: 2, octets: bytes(2) }
      ])
    ).toEqual({ octets: bytes(2), segments: 1, complete: false })
  })

  it("joins nothing into an empty, incomplete message", () => {
    expect(joinParts(2, [])).toEqual({ octets: bytes(), segments: 0, complete: false })
  })
})
