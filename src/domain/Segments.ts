/**
 * SMS segment counting (product contract): GSM 03.38 7-bit when every character is in the basic
 * set or the extension table (an extension character costs two septets), UCS-2 otherwise (counted
 * in UTF-16 code units, so a character outside the BMP costs two). One segment holds 160 septets
 * or 70 units; a longer text is split into segments of 153 septets or 67 units, and a split never
 * cuts an escape pair or a surrogate pair, so counting simulates the split instead of dividing.
 *
 * Pure and allocation-light: the tables are built once, and a count is two passes over the text.
 */

/** The two SMS encodings a text can be sent in. */
export type Encoding = "GSM-7" | "UCS-2"

/** How a text is encoded and how many segments it needs. */
export interface SegmentCount {
  readonly encoding: Encoding
  /** Septets for GSM-7, UTF-16 code units for UCS-2. */
  readonly units: number
  readonly segments: number
  /** Distinct characters (code points) that forced UCS-2, in order of first appearance; empty for GSM-7. */
  readonly forcedBy: ReadonlyArray<string>
}

/** The most segments a message may need before it is refused. */
export const maxSegments = 2

/** GSM 03.38 basic character set, in table order (0x1B, the escape, is not a character). */
const GSM_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅå" +
  "Δ_ΦΓΛΩΠΨΣΘΞÆæßÉ" +
  " !\"#¤%&'()*+,-./" +
  "0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNO" +
  "PQRSTUVWXYZÄÖÑÜ§" +
  "¿abcdefghijklmno" +
  "pqrstuvwxyzäöñüà"

/** GSM 03.38 extension table: each is sent as ESC + character, two septets. */
const GSM_EXTENSION = "\f^{}\\[~]|€"

/** Septet cost by UTF-16 code unit: 1 for the basic set, 2 for the extension table, absent otherwise. */
const septetCost: ReadonlyMap<number, 1 | 2> = (() => {
  const m = new Map<number, 1 | 2>()
  for (let i = 0; i < GSM_BASIC.length; i++) m.set(GSM_BASIC.charCodeAt(i), 1)
  for (let i = 0; i < GSM_EXTENSION.length; i++) m.set(GSM_EXTENSION.charCodeAt(i), 2)
  return m
})()

const GSM_SINGLE = 160
const GSM_MULTI = 153
const UCS2_SINGLE = 70
const UCS2_MULTI = 67

const isHigh = (u: number): boolean => u >= 0xd800 && u <= 0xdbff
const isLow = (u: number): boolean => u >= 0xdc00 && u <= 0xdfff

/**
 * Greedy split into segments of at most `capacity`, never cutting an escape pair (GSM-7) or a
 * surrogate pair (UCS-2): a two-unit item that does not fit opens the next segment.
 */
const splitCount = (text: string, encoding: Encoding, capacity: number): number => {
  let segments = 1
  let used = 0
  for (let i = 0; i < text.length; i++) {
    let cost: number
    if (encoding === "GSM-7") {
      cost = septetCost.get(text.charCodeAt(i))!
    } else if (isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      cost = 2
      i++
    } else {
      cost = 1
    }
    if (used + cost > capacity) {
      segments++
      used = 0
    }
    used += cost
  }
  return segments
}

/** Counts the encoding, units and segments of an SMS text (empty text needs 0 segments). */
export const countSegments = (text: string): SegmentCount => {
  let septets = 0
  let forced: Array<string> | undefined
  let seen: Set<string> | undefined
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const cost = septetCost.get(code)
    if (cost !== undefined) {
      septets += cost
      continue
    }
    const pair = isHigh(code) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))
    const char = pair ? text.slice(i, i + 2) : text[i]!
    if (pair) i++
    forced ??= []
    seen ??= new Set()
    if (!seen.has(char)) {
      seen.add(char)
      forced.push(char)
    }
  }

  if (forced === undefined) {
    const segments = septets === 0 ? 0 : septets <= GSM_SINGLE ? 1 : splitCount(text, "GSM-7", GSM_MULTI)
    return { encoding: "GSM-7", units: septets, segments, forcedBy: [] }
  }
  const units = text.length
  const segments = units <= UCS2_SINGLE ? 1 : splitCount(text, "UCS-2", UCS2_MULTI)
  return { encoding: "UCS-2", units, segments, forcedBy: forced }
}

const MAX_LISTED = 10

/** Invisible or layout characters are shown as U+XXXX so the message stays one readable line. */
const showChar = (c: string): string =>
  /^[\p{C}\p{Z}\p{M}]$/u.test(c)
    ? "U+" + c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")
    : c

/** One-line English description of a count, used in validation errors. */
export const describeSegments = (c: SegmentCount): string => {
  const base = `text needs ${c.segments} segment${c.segments === 1 ? "" : "s"} in ${c.encoding} (at most ${maxSegments} allowed)`
  if (c.encoding !== "UCS-2" || c.forcedBy.length === 0) return base
  const listed = c.forcedBy.slice(0, MAX_LISTED).map(showChar).join(", ")
  const more = c.forcedBy.length > MAX_LISTED ? ` and ${c.forcedBy.length - MAX_LISTED} more` : ""
  return `${base}; UCS-2 forced by: ${listed}${more}`
}
