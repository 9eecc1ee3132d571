/**
 * SMS segment counting (product contract): GSM 03.38 7-bit when every character is in the basic
 * set or the extension table (an extension character costs two septets), UCS-2 otherwise (counted
 * in UTF-16 code units, so a character outside the BMP costs two). One segment holds 160 septets
 * or 70 units; a longer text is split into segments of 153 septets or 67 units, and a split never
 * cuts an escape pair or a surrogate pair, so counting simulates the split instead of dividing.
 *
 * The same tables and split encode a text for sending (`encodeSegments`), so a provider adapter
 * cuts exactly where the count was made. Pure and allocation-light: the tables are built once,
 * and a count is two passes over the text.
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
/** The code each extension character has after the escape, in the order of GSM_EXTENSION. */
const GSM_EXTENSION_CODES = [0x0a, 0x14, 0x28, 0x29, 0x2f, 0x3c, 0x3d, 0x3e, 0x40, 0x65]
const GSM_ESCAPE = 0x1b

/**
 * The septet of every UTF-16 code unit GSM-7 can carry: its basic-set value, or `0x1B00 | code`
 * for an extension character (so a value above 0xFF costs two septets). Absent: not GSM-7.
 */
const gsmSeptet: ReadonlyMap<number, number> = (() => {
  const m = new Map<number, number>()
  // GSM_BASIC skips the escape (0x1B), so the characters after it sit one septet further
  // Stryker disable next-line EqualityOperator: one step past the end sets the key NaN, which charCodeAt never returns
  for (let i = 0; i < GSM_BASIC.length; i++) {
    m.set(GSM_BASIC.charCodeAt(i), i < GSM_ESCAPE ? i : i + 1)
  }
  // Stryker disable next-line EqualityOperator: one step past the end sets the key NaN, which charCodeAt never returns
  for (let i = 0; i < GSM_EXTENSION.length; i++) {
    m.set(GSM_EXTENSION.charCodeAt(i), (GSM_ESCAPE << 8) | GSM_EXTENSION_CODES[i]!)
  }
  return m
})()

// Stryker disable next-line EqualityOperator: no septet is 0xFF (basic ones are at most 0x7F, escaped ones at least 0x1B0A)
const septetCost = (septet: number): 1 | 2 => (septet > 0xff ? 2 : 1)

const GSM_SINGLE = 160
const GSM_MULTI = 153
const UCS2_SINGLE = 70
const UCS2_MULTI = 67

const isHigh = (u: number): boolean => u >= 0xd800 && u <= 0xdbff
const isLow = (u: number): boolean => u >= 0xdc00 && u <= 0xdfff

/**
 * Greedy split into segments of at most `capacity`, never cutting an escape pair (GSM-7) or a
 * surrogate pair (UCS-2): a two-unit item that does not fit opens the next segment. Returns the
 * index in `text` where each segment starts.
 */
const segmentStarts = (text: string, encoding: Encoding, capacity: number): Array<number> => {
  const starts = [0]
  let used = 0
  for (let i = 0; i < text.length; i++) {
    const start = i
    let cost: number
    if (encoding === "GSM-7") {
      cost = septetCost(gsmSeptet.get(text.charCodeAt(i))!)
    } else if (
      isHigh(text.charCodeAt(i)) &&
      // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: past the end charCodeAt is NaN, which isLow refuses
      i + 1 < text.length &&
      isLow(text.charCodeAt(i + 1))
    ) {
      cost = 2
      i++
    } else {
      cost = 1
    }
    if (used + cost > capacity) {
      starts.push(start)
      used = 0
    }
    used += cost
  }
  return starts
}

/** Counts the encoding, units and segments of an SMS text (empty text needs 0 segments). */
export const countSegments = (text: string): SegmentCount => {
  let septets = 0
  let forced: Array<string> | undefined
  let seen: Set<string> | undefined
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const septet = gsmSeptet.get(code)
    if (septet !== undefined) {
      septets += septetCost(septet)
      continue
    }
    const pair =
      isHigh(code) &&
      // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: past the end charCodeAt is NaN, which isLow refuses
      i + 1 < text.length &&
      isLow(text.charCodeAt(i + 1))
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
    const segments = septets === 0 ? 0 : septets <= GSM_SINGLE ? 1 : segmentStarts(text, "GSM-7", GSM_MULTI).length
    return { encoding: "GSM-7", units: septets, segments, forcedBy: [] }
  }
  const units = text.length
  // Stryker disable next-line StringLiteral: equivalent, segmentStarts reads any encoding but GSM-7 as UCS-2
  const segments = units <= UCS2_SINGLE ? 1 : segmentStarts(text, "UCS-2", UCS2_MULTI).length
  return { encoding: "UCS-2", units, segments, forcedBy: forced }
}

/** A text cut into its segments exactly where `countSegments` counts them, each encoded for the air. */
export interface EncodedSegments {
  readonly encoding: Encoding
  /** GSM-7: one septet per octet, an extension character as 0x1B and its code; UCS-2: UTF-16 big-endian. */
  readonly segments: ReadonlyArray<Uint8Array>
}

const encodeGsm7 = (text: string, septets: number): Uint8Array => {
  const out = new Uint8Array(septets)
  let o = 0
  // Stryker disable next-line EqualityOperator: equivalent, a write past the end of a Uint8Array is dropped
  for (let i = 0; i < text.length; i++) {
    const septet = gsmSeptet.get(text.charCodeAt(i))!
    // Stryker disable next-line EqualityOperator: no septet is 0xFF (basic ones are at most 0x7F, escaped ones at least 0x1B0A)
    if (septet > 0xff) out[o++] = GSM_ESCAPE
    out[o++] = septet & 0xff
  }
  return out
}

const encodeUcs2 = (text: string): Uint8Array => {
  const out = new Uint8Array(text.length * 2)
  // Stryker disable next-line EqualityOperator: equivalent, a write past the end of a Uint8Array is dropped
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    out[2 * i] = unit >> 8
    out[2 * i + 1] = unit & 0xff
  }
  return out
}

const septetsOf = (text: string): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) n += septetCost(gsmSeptet.get(text.charCodeAt(i))!)
  return n
}

/** Encodes a text (at least one character) in the encoding `countSegments` picks, one byte array per segment it counts. */
export const encodeSegments = (text: string): EncodedSegments => {
  const count = countSegments(text)
  const gsm = count.encoding === "GSM-7"
  const starts = count.segments <= 1 ? [0] : segmentStarts(text, count.encoding, gsm ? GSM_MULTI : UCS2_MULTI)
  const segments = starts.map((start, k) => {
    const chunk = text.slice(start, starts[k + 1] ?? text.length)
    return gsm ? encodeGsm7(chunk, septetsOf(chunk)) : encodeUcs2(chunk)
  })
  return { encoding: count.encoding, segments }
}

/** The character of every septet (a basic one as it is, an extension one as `0x1B00 | code`): gsmSeptet turned round. */
const gsmChar: ReadonlyMap<number, string> = new Map(
  [...gsmSeptet].map(([unit, septet]) => [septet, String.fromCharCode(unit)])
)

/**
 * GSM 03.38 septets, one per octet (as SMPP `data_coding` 0 carries them), back to text: 0x1B
 * and the next septet are an extension character; an escape before a code with none reads as the
 * basic character of that code (GSM 03.38's fallback), a trailing escape as nothing.
 */
export const decodeGsm7 = (octets: Uint8Array): string => {
  let text = ""
  for (let i = 0; i < octets.length; i++) {
    const septet = octets[i]! & 0x7f
    if (septet === GSM_ESCAPE) {
      const next = octets[i + 1]
      if (next === undefined) break
      i++
      text += gsmChar.get((GSM_ESCAPE << 8) | (next & 0x7f)) ?? gsmChar.get(next & 0x7f) ?? ""
      continue
    }
    text += gsmChar.get(septet) ?? ""
  }
  return text
}

const MAX_LISTED = 10

/** Invisible or layout characters are shown as U+XXXX so the message stays one readable line. */
const showChar = (c: string): string =>
  // Stryker disable next-line Regex: `c` is one code point, so the anchors cannot change the answer
  /^[\p{C}\p{Z}\p{M}]$/u.test(c) ? `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}` : c

/** One-line English description of a count, used in validation errors. */
export const describeSegments = (c: SegmentCount): string => {
  const base = `text needs ${c.segments} segment${c.segments === 1 ? "" : "s"} in ${c.encoding} (at most ${maxSegments} allowed)`
  // Stryker disable next-line LogicalOperator,ConditionalExpression: countSegments lists forcing characters exactly when it picks UCS-2, so either half decides alone
  if (c.encoding !== "UCS-2" || c.forcedBy.length === 0) return base
  const listed = c.forcedBy.slice(0, MAX_LISTED).map(showChar).join(", ")
  const more = c.forcedBy.length > MAX_LISTED ? ` and ${c.forcedBy.length - MAX_LISTED} more` : ""
  return `${base}; UCS-2 forced by: ${listed}${more}`
}
