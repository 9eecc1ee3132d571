/**
 * The text of an inbound message from its octets and SMPP `data_coding`
 * (docs/two-way.md): 0 GSM 7-bit (one septet per octet), 1 IA5
 * (ASCII), 3 Latin-1, 8 UCS-2 big-endian; any other coding is not read: its octets are kept as
 * hex and the text is empty. Pure.
 */
import { decodeGsm7 } from "./Segments.ts"

export interface DecodedText {
  readonly text: string
  /** The octets as hex when the coding is not one the service reads; null when it is. */
  readonly hex: string | null
}

/** Whether the service reads texts of this `data_coding`. */
export const readsCoding = (dataCoding: number): boolean =>
  dataCoding === 0 || dataCoding === 1 || dataCoding === 3 || dataCoding === 8

const latin1 = (octets: Uint8Array): string => {
  let text = ""
  for (const octet of octets) text += String.fromCharCode(octet)
  return text
}

const ucs2 = (octets: Uint8Array): string => {
  let text = ""
  // an odd last octet is half a unit: dropped
  for (let i = 0; i + 1 < octets.length; i += 2) text += String.fromCharCode((octets[i]! << 8) | octets[i + 1]!)
  // a lone half of a surrogate pair is no character: U+FFFD in its place
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/gu, "\uFFFD")
}

export const toHex = (octets: Uint8Array): string => Array.from(octets, (o) => o.toString(16).padStart(2, "0")).join("")

/** The text `octets` carry in `dataCoding`. */
export const decodeText = (dataCoding: number, octets: Uint8Array): DecodedText => {
  switch (dataCoding) {
    case 0:
      return { text: decodeGsm7(octets), hex: null }
    case 1:
      return { text: latin1(octets.map((o) => o & 0x7f)), hex: null }
    case 3:
      return { text: latin1(octets), hex: null }
    case 8:
      return { text: ucs2(octets), hex: null }
    default:
      return { text: "", hex: toHex(octets) }
  }
}
