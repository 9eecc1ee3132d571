/**
 * The text of an inbound message by its `data_coding` (docs/two-way.md, "Ingest"): 0 (GSM 7-bit,
 * one septet an octet, extension characters included), 1 (IA5), 3 (Latin-1) and 8 (UCS-2
 * big-endian) are decoded; any other is kept as its hex with the text `""`.
 */
import { describe, expect, it } from "vitest"
import { decodeText, readsCoding, toHex } from "../../src/domain/DataCoding.ts"

const bytes = (...xs: Array<number>) => Uint8Array.from(xs)

describe("readsCoding", () => {
  it("reads data_coding 0, 1, 3 and 8", () => {
    for (const coding of [0, 1, 3, 8]) expect(readsCoding(coding)).toBe(true)
  })

  it("reads no other", () => {
    for (const coding of [2, 4, 5, 6, 7, 9, 0x10, 0x18, 0xf0, 0xf5, 0xff]) expect(readsCoding(coding)).toBe(false)
  })
})

describe("decodeText", () => {
  it("reads GSM 7-bit one septet an octet, an escape before an extension code as its character", () => {
    expect(decodeText(0, bytes(0x48, 0x69, 0x1b, 0x65))).toEqual({ text: "Hi€", hex: null })
    expect(decodeText(0, bytes(0x02, 0x00, 0x1b, 0x28, 0x1b, 0x29))).toEqual({ text: "$@{}", hex: null })
  })

  it("reads an escape before a code without an extension character as that code's basic one", () => {
    expect(decodeText(0, bytes(0x1b, 0x41))).toEqual({ text: "A", hex: null })
  })

  it("reads an escape before another escape as nothing, and a trailing escape as nothing", () => {
    expect(decodeText(0, bytes(0x41, 0x1b, 0x1b, 0x42))).toEqual({ text: "AB", hex: null })
    expect(decodeText(0, bytes(0x41, 0x1b))).toEqual({ text: "A", hex: null })
  })

  it("reads IA5 as ASCII, seven bits an octet", () => {
    expect(decodeText(1, bytes(0x4f, 0x4b))).toEqual({ text: "OK", hex: null })
    // the eighth bit is no part of an IA5 character
    expect(decodeText(1, bytes(0xc8, 0xe9))).toEqual({ text: "Hi", hex: null })
    expect(decodeText(1, bytes(0x24, 0x40, 0x7b))).toEqual({ text: "$@{", hex: null })
  })

  it("reads Latin-1, eight bits an octet", () => {
    expect(decodeText(3, bytes(0xc8, 0xe9))).toEqual({ text: "Èé", hex: null })
    expect(decodeText(3, bytes(0x41, 0xff))).toEqual({ text: "Aÿ", hex: null })
  })

  it("reads UCS-2 big-endian, a surrogate pair as one character and an odd last octet dropped", () => {
    expect(decodeText(8, bytes(0x04, 0x36, 0xd8, 0x3d, 0xde, 0x00))).toEqual({ text: "ж😀", hex: null })
    expect(decodeText(8, bytes(0x00, 0x41, 0x00))).toEqual({ text: "A", hex: null })
    expect(decodeText(8, bytes(0x00))).toEqual({ text: "", hex: null })
  })

  it("replaces a lone half of a surrogate pair with U+FFFD", () => {
    // a high surrogate not followed by a low one
    expect(decodeText(8, bytes(0xd8, 0x3d, 0x00, 0x41)).text).toBe("\uFFFDA")
    expect(decodeText(8, bytes(0x00, 0x41, 0xd8, 0x3d)).text).toBe("A\uFFFD")
    // a low surrogate not preceded by a high one: first, after a character, after a whole pair
    expect(decodeText(8, bytes(0xde, 0x00, 0x00, 0x41)).text).toBe("\uFFFDA")
    expect(decodeText(8, bytes(0x00, 0x41, 0xde, 0x00)).text).toBe("A\uFFFD")
    expect(decodeText(8, bytes(0xd8, 0x3d, 0xde, 0x00, 0xde, 0x00)).text).toBe("😀\uFFFD")
    // a pair in the wrong order is two lone halves
    expect(decodeText(8, bytes(0xde, 0x00, 0xd8, 0x3d)).text).toBe("\uFFFD\uFFFD")
    expect(decodeText(8, bytes(0xd8, 0x3d, 0xd8, 0x3d, 0xde, 0x00)).text).toBe("\uFFFD😀")
  })

  it("keeps any other coding as its hex, with the text empty", () => {
    expect(decodeText(2, bytes(0xde, 0xad, 0x01))).toEqual({ text: "", hex: "dead01" })
    expect(decodeText(4, bytes(0x00, 0x0f, 0xff))).toEqual({ text: "", hex: "000fff" })
    expect(decodeText(0xf5, bytes(0x41))).toEqual({ text: "", hex: "41" })
    expect(decodeText(4, bytes())).toEqual({ text: "", hex: "" })
  })

  it("writes hex two lowercase digits an octet", () => {
    expect(toHex(bytes(0x00, 0x0a, 0xab, 0xff))).toBe("000aabff")
  })
})
