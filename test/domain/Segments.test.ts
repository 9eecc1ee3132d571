import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { countSegments, describeSegments, encodeSegments, maxSegments } from "../../src/domain/Segments.ts"
import type { SegmentCount } from "../../src/domain/Segments.ts"

// Independent copy of the GSM 03.38 tables, written out per row so a typo in either copy shows up.
const basicRows = [
  ["@", "£", "$", "¥", "è", "é", "ù", "ì", "ò", "Ç", "\n", "Ø", "ø", "\r", "Å", "å"],
  ["Δ", "_", "Φ", "Γ", "Λ", "Ω", "Π", "Ψ", "Σ", "Θ", "Ξ", /* ESC */ "Æ", "æ", "ß", "É"],
  [" ", "!", '"', "#", "¤", "%", "&", "'", "(", ")", "*", "+", ",", "-", ".", "/"],
  ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", ":", ";", "<", "=", ">", "?"],
  ["¡", ..."ABCDEFGHIJKLMNO"],
  [..."PQRSTUVWXYZ", "Ä", "Ö", "Ñ", "Ü", "§"],
  ["¿", ..."abcdefghijklmno"],
  [..."pqrstuvwxyz", "ä", "ö", "ñ", "ü", "à"]
]
const basic: ReadonlyArray<string> = basicRows.flat()
const extension: ReadonlyArray<string> = ["\f", "^", "{", "}", "\\", "[", "~", "]", "|", "€"]
const gsm = new Set([...basic, ...extension])

const emoji = "😀"
const rep = (s: string, n: number): string => s.repeat(n)

const expectCount = (text: string, expected: Partial<SegmentCount>): void => {
  expect(countSegments(text)).toMatchObject(expected)
}

/** Reference split: cut the text into actual segments, never inside an escape or surrogate pair. */
const referenceSegments = (text: string): { readonly encoding: string; readonly chunks: ReadonlyArray<string> } => {
  const codePoints = Array.from(text)
  const isGsm = codePoints.every((c) => gsm.has(c))
  const cost = (c: string): number => (isGsm ? (extension.includes(c) ? 2 : 1) : c.length)
  const total = codePoints.reduce((n, c) => n + cost(c), 0)
  const [single, multi] = isGsm ? [160, 153] : [70, 67]
  if (total === 0) return { encoding: isGsm ? "GSM-7" : "UCS-2", chunks: [] }
  if (total <= single) return { encoding: isGsm ? "GSM-7" : "UCS-2", chunks: [text] }
  const chunks: Array<string> = []
  let current = ""
  let used = 0
  for (const c of codePoints) {
    if (used + cost(c) > multi) {
      chunks.push(current)
      current = ""
      used = 0
    }
    current += c
    used += cost(c)
  }
  chunks.push(current)
  return { encoding: isGsm ? "GSM-7" : "UCS-2", chunks }
}

const basicChar = fc.constantFrom(...basic)
const extensionChar = fc.constantFrom(...extension)
const gsmChar = fc.oneof(basicChar, extensionChar)
const nonGsmChar = fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).filter((c) => !gsm.has(c))
const anyChar = fc.oneof(gsmChar, fc.string({ unit: "binary", minLength: 1, maxLength: 1 }), fc.constant(emoji))
const gsmText = fc.string({ unit: gsmChar, maxLength: 400 })
const ucs2Text = fc
  .tuple(fc.string({ unit: anyChar, maxLength: 200 }), nonGsmChar, fc.string({ unit: anyChar, maxLength: 200 }))
  .map(([a, c, b]) => a + c + b)

describe("countSegments: tables", () => {
  it("has 127 basic characters and 10 extension characters, all distinct", () => {
    expect(basic).toHaveLength(127)
    expect(gsm.size).toBe(137)
  })

  it("counts every basic character as one GSM-7 septet", () => {
    for (const c of basic)
      expect(countSegments(c), JSON.stringify(c)).toEqual({ encoding: "GSM-7", units: 1, segments: 1, forcedBy: [] })
  })

  it("counts every extension character as two GSM-7 septets", () => {
    for (const c of extension)
      expect(countSegments(c), JSON.stringify(c)).toEqual({ encoding: "GSM-7", units: 2, segments: 1, forcedBy: [] })
  })

  it("forces UCS-2 for every other code unit in U+0000..U+07FF and U+2000..U+20FF", () => {
    const codes = [
      ...Array.from({ length: 0x800 }, (_, i) => i),
      ...Array.from({ length: 0x100 }, (_, i) => 0x2000 + i)
    ]
    for (const code of codes) {
      const c = String.fromCharCode(code)
      const expected = gsm.has(c) ? "GSM-7" : "UCS-2"
      expect(countSegments(c).encoding, `U+${code.toString(16)}`).toBe(expected)
    }
  })

  it("forces UCS-2 for non-GSM ASCII: backtick, tab, DEL", () => {
    for (const c of ["`", "\t", "\u007f", "\u0000"]) {
      expect(countSegments(`hi${c}`)).toEqual({ encoding: "UCS-2", units: 3, segments: 1, forcedBy: [c] })
    }
  })

  it("é is GSM-7; ç and ô force UCS-2; Ç is GSM-7", () => {
    expectCount("é", { encoding: "GSM-7", forcedBy: [] })
    expectCount("Ç", { encoding: "GSM-7", forcedBy: [] })
    expectCount("ç", { encoding: "UCS-2", forcedBy: ["ç"] })
    expectCount("ô", { encoding: "UCS-2", forcedBy: ["ô"] })
    expectCount("Garçon, é, hôtel, ça", { encoding: "UCS-2", units: 20, segments: 1, forcedBy: ["ç", "ô"] })
  })
})

describe("countSegments: examples", () => {
  it("empty text needs 0 segments in GSM-7", () => {
    expect(countSegments("")).toEqual({ encoding: "GSM-7", units: 0, segments: 0, forcedBy: [] })
  })

  it.each([
    [1, 1],
    [160, 1],
    [161, 2],
    [306, 2],
    [307, 3],
    [459, 3],
    [460, 4]
  ])("%i 'a' = %i segments", (n, segments) => {
    expectCount(rep("a", n), { encoding: "GSM-7", units: n, segments })
  })

  it.each([
    [80, 160, 1],
    [81, 162, 2],
    [152, 304, 2],
    [153, 306, 3]
  ])("%i '€' = %i septets, %i segments", (n, units, segments) => {
    expectCount(rep("€", n), { encoding: "GSM-7", units, segments })
  })

  it.each([
    [70, 1],
    [71, 2],
    [134, 2],
    [135, 3]
  ])("%i 'ж' = %i segments", (n, segments) => {
    expectCount(rep("ж", n), { encoding: "UCS-2", units: n, segments, forcedBy: ["ж"] })
  })

  it.each([
    [35, 70, 1],
    [36, 72, 2],
    [66, 132, 2],
    [67, 134, 3]
  ])("%i emoji = %i units, %i segments", (n, units, segments) => {
    expectCount(rep(emoji, n), { encoding: "UCS-2", units, segments, forcedBy: [emoji] })
  })

  it("never cuts an escape pair: 152 'a' + € + 152 'a' is 306 septets but 3 segments", () => {
    // naive ceil(306 / 153) = 2; the € cannot straddle septet 153, so segment 1 holds 152 septets.
    expectCount(`${rep("a", 152)}€${rep("a", 152)}`, { encoding: "GSM-7", units: 306, segments: 3 })
    // shifting the € by one septet lets it fit: 151 + 2 = 153, then 153.
    expectCount(`${rep("a", 151)}€${rep("a", 153)}`, { encoding: "GSM-7", units: 306, segments: 2 })
    // an escape pair that fits in a single 160-septet message is never split.
    expectCount(`${rep("a", 158)}€`, { encoding: "GSM-7", units: 160, segments: 1 })
  })

  it("never cuts a surrogate pair: 66 'ж' + emoji + 66 'ж' is 134 units but 3 segments", () => {
    expectCount(rep("ж", 66) + emoji + rep("ж", 66), {
      encoding: "UCS-2",
      units: 134,
      segments: 3,
      forcedBy: ["ж", emoji]
    })
    expectCount(rep("ж", 65) + emoji + rep("ж", 67), {
      encoding: "UCS-2",
      units: 134,
      segments: 2,
      forcedBy: ["ж", emoji]
    })
    expectCount(rep("ж", 68) + emoji, { encoding: "UCS-2", units: 70, segments: 1 })
  })

  it("one non-GSM character switches the whole text to UCS-2 limits", () => {
    expectCount(rep("a", 70), { encoding: "GSM-7", segments: 1 })
    expectCount(`${rep("a", 70)}ç`, { encoding: "UCS-2", units: 71, segments: 2, forcedBy: ["ç"] })
    // in UCS-2 the € is one unit, not two septets
    expectCount("€ç", { encoding: "UCS-2", units: 2, forcedBy: ["ç"] })
  })

  it("forcedBy lists distinct characters in order of first appearance, a lone surrogate as itself", () => {
    expectCount("ôçaôç😀ç\ud800x", { encoding: "UCS-2", units: 10, forcedBy: ["ô", "ç", emoji, "\ud800"] })
  })
})

describe("describeSegments", () => {
  it("describes a GSM-7 count", () => {
    expect(describeSegments(countSegments(rep("a", 307)))).toBe("text needs 3 segments in GSM-7 (at most 2 allowed)")
    expect(describeSegments(countSegments("a"))).toBe("text needs 1 segment in GSM-7 (at most 2 allowed)")
  })

  it("describes a UCS-2 count with the characters that forced it", () => {
    expect(describeSegments(countSegments(rep("ç", 70) + rep("ô", 70)))).toBe(
      "text needs 3 segments in UCS-2 (at most 2 allowed); UCS-2 forced by: ç, ô"
    )
  })

  it("caps the listed characters at 10 and shows invisible ones as code points", () => {
    const text = "абвгдежзий" + "клм" + "\t"
    const message = describeSegments(countSegments(text))
    expect(message).toBe(
      "text needs 1 segment in UCS-2 (at most 2 allowed); UCS-2 forced by: а, б, в, г, д, е, ж, з, и, й and 4 more"
    )
    expect(describeSegments(countSegments("a\tb\u00a0"))).toBe(
      "text needs 1 segment in UCS-2 (at most 2 allowed); UCS-2 forced by: U+0009, U+00A0"
    )
  })

  it("allows at most 2 segments", () => {
    expect(maxSegments).toBe(2)
  })

  it("is a single line for any text", () => {
    fc.assert(fc.property(ucs2Text, (t) => !describeSegments(countSegments(t)).includes("\n")))
  })
})

describe("countSegments: properties", () => {
  it("matches a reference split that builds the actual segments", () => {
    fc.assert(
      fc.property(fc.oneof(gsmText, ucs2Text), (t) => {
        const got = countSegments(t)
        const ref = referenceSegments(t)
        expect(ref.chunks.join("")).toBe(t)
        expect(got.encoding).toBe(ref.encoding)
        expect(got.segments).toBe(ref.chunks.length)
      }),
      { numRuns: 300 }
    )
  })

  it("segments never decrease when appending a GSM character to a GSM-7 text", () => {
    fc.assert(
      fc.property(gsmText, gsmChar, (t, c) => {
        const before = countSegments(t)
        const after = countSegments(t + c)
        expect(after.encoding).toBe("GSM-7")
        expect(after.units).toBe(before.units + (extension.includes(c) ? 2 : 1))
        expect(after.segments).toBeGreaterThanOrEqual(before.segments)
      }),
      { numRuns: 500 }
    )
  })

  it("segments never decrease when appending any character to a UCS-2 text", () => {
    fc.assert(
      fc.property(ucs2Text, anyChar, (t, c) => {
        const before = countSegments(t)
        const after = countSegments(t + c)
        expect(after.encoding).toBe("UCS-2")
        expect(after.units).toBe(before.units + c.length)
        expect(after.segments).toBeGreaterThanOrEqual(before.segments)
      }),
      { numRuns: 500 }
    )
  })

  it("basic-only GSM-7 text of n characters needs n <= 160 ? 1 : ceil(n / 153) segments", () => {
    fc.assert(
      fc.property(fc.string({ unit: basicChar, minLength: 1, maxLength: 700 }), (t) => {
        const n = t.length
        expect(countSegments(t)).toEqual({
          encoding: "GSM-7",
          units: n,
          segments: n <= 160 ? 1 : Math.ceil(n / 153),
          forcedBy: []
        })
      }),
      { numRuns: 300 }
    )
  })

  it("a text with any non-GSM character is UCS-2 and forcedBy names it", () => {
    fc.assert(
      fc.property(gsmText, nonGsmChar, gsmText, (a, c, b) => {
        const got = countSegments(a + c + b)
        expect(got.encoding).toBe("UCS-2")
        expect(got.units).toBe((a + c + b).length)
        expect(got.forcedBy).toEqual([c])
      }),
      { numRuns: 300 }
    )
  })

  it("forcedBy holds distinct non-GSM characters that occur in the text", () => {
    fc.assert(
      fc.property(ucs2Text, (t) => {
        const { forcedBy } = countSegments(t)
        expect(forcedBy.length).toBeGreaterThan(0)
        expect(new Set(forcedBy).size).toBe(forcedBy.length)
        for (const c of forcedBy) {
          expect(gsm.has(c)).toBe(false)
          expect(t.includes(c)).toBe(true)
        }
        expect(forcedBy).toEqual([...new Set(Array.from(t).filter((c) => !gsm.has(c)))])
      }),
      { numRuns: 300 }
    )
  })

  it("the pair-aware count is never below the naive division", () => {
    fc.assert(
      fc.property(fc.oneof(gsmText, ucs2Text), (t) => {
        const { encoding, units, segments } = countSegments(t)
        const [single, multi] = encoding === "GSM-7" ? [160, 153] : [70, 67]
        const naive = units === 0 ? 0 : units <= single ? 1 : Math.ceil(units / multi)
        expect(segments).toBeGreaterThanOrEqual(naive)
      })
    )
  })
})

// GSM 03.38 code of each character, written out independently: the row tables above with the
// escape put back at 0x1B, and the extension characters' codes after the escape.
const septetOf: ReadonlyMap<string, ReadonlyArray<number>> = new Map<string, ReadonlyArray<number>>([
  ...[...basic.slice(0, 27), "\u001b", ...basic.slice(27)]
    .map((c, code) => [c, [code]] as const)
    .filter(([c]) => c !== "\u001b"),
  ...(
    [
      ["\f", 0x0a],
      ["^", 0x14],
      ["{", 0x28],
      ["}", 0x29],
      ["\\", 0x2f],
      ["[", 0x3c],
      ["~", 0x3d],
      ["]", 0x3e],
      ["|", 0x40],
      ["€", 0x65]
    ] as const
  ).map(([c, code]) => [c, [0x1b, code]] as const)
])
const referenceBytes = (chunk: string, encoding: string): Array<number> =>
  encoding === "GSM-7"
    ? Array.from(chunk).flatMap((c) => [...septetOf.get(c)!])
    : Array.from({ length: chunk.length }, (_, i) => [chunk.charCodeAt(i) >> 8, chunk.charCodeAt(i) & 0xff]).flat()

describe("encodeSegments", () => {
  it("cuts where the count cuts and encodes each segment (GSM-7 unpacked septets, UCS-2 big-endian)", () => {
    fc.assert(
      fc.property(
        fc.oneof(gsmText, ucs2Text).filter((t) => t.length > 0),
        (t) => {
          const ref = referenceSegments(t)
          const got = encodeSegments(t)
          expect(got.encoding).toBe(ref.encoding)
          expect(got.segments.map((s) => Array.from(s))).toEqual(ref.chunks.map((c) => referenceBytes(c, ref.encoding)))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("writes an extension character as the escape and its code, never split across segments", () => {
    const { segments } = encodeSegments(`${rep("a", 152)}€${rep("a", 152)}`)
    expect(segments.map((s) => s.length)).toEqual([152, 153, 1])
    expect(Array.from(segments[1]!.slice(0, 2))).toEqual([0x1b, 0x65])
    expect(Array.from(encodeSegments("@Δ_ÆÉ{").segments[0]!)).toEqual([0x00, 0x10, 0x11, 0x1c, 0x1f, 0x1b, 0x28])
  })

  it("keeps a surrogate pair whole in UCS-2", () => {
    const { encoding, segments } = encodeSegments(rep("ж", 66) + emoji + rep("ж", 65))
    expect(encoding).toBe("UCS-2")
    expect(segments.map((s) => s.length)).toEqual([132, 134])
    expect(Array.from(segments[1]!.slice(0, 4))).toEqual([0xd8, 0x3d, 0xde, 0x00])
  })
})

/** Distinct non-GSM code points of a text, lone surrogates as themselves, in order (forcedBy's reference). */
const referenceForced = (text: string) => [...new Set(Array.from(text).filter((c) => !gsm.has(c)))]

describe("surrogates at the edges of their ranges", () => {
  // a two-unit sequence placed where a 67-unit segment ends: a pair opens the next segment, two
  // single units do not; and forcedBy names a pair as one character, lone surrogates one by one
  const sequences = [
    ["a pair, lowest", "\ud800\udc00"],
    ["a pair, highest", "\udbff\udfff"],
    ["a BMP letter before a low surrogate", "ж\udc00"],
    ["the unit below the high range before a low surrogate", "\ud7ff\udc00"],
    ["a low surrogate before another", "\udc00\udc00"],
    ["a private-use unit before a low surrogate", "\ue000\udfff"],
    ["the last BMP unit before a low surrogate", "\uffff\udc00"],
    ["two high surrogates", "\ud800\ud800"],
    ["a high surrogate before the unit above the low range", "\udbff\ue000"],
    ["a high surrogate before the unit below the low range", "\ud800\udbff"],
    ["a high surrogate at the very end", "ж\ud800"]
  ] as const

  it.each(sequences)("%s: counted, cut and listed as the reference does", (_name, seq) => {
    for (const text of [
      rep("ж", 66) + seq + rep("ж", 10),
      rep("ж", 65) + seq + rep("ж", 10),
      seq,
      rep("ж", 66) + seq
    ]) {
      const ref = referenceSegments(text)
      const count = countSegments(text)
      expect(count.segments, JSON.stringify(text.slice(60))).toBe(ref.chunks.length)
      expect(count.forcedBy, JSON.stringify(seq)).toEqual(referenceForced(text))
      expect(encodeSegments(text).segments.map((s) => Array.from(s))).toEqual(
        ref.chunks.map((c) => referenceBytes(c, "UCS-2"))
      )
    }
  })

  it("matches the reference for texts mixing lone surrogates, pairs and edge units", () => {
    const edgeUnit = fc.constantFrom(
      "\ud800",
      "\udbff",
      "\udc00",
      "\udfff",
      "\ud7ff",
      "\ue000",
      "\uffff",
      emoji,
      "ж",
      "a"
    )
    fc.assert(
      fc.property(fc.string({ unit: edgeUnit, minLength: 1, maxLength: 160 }), (t) => {
        const ref = referenceSegments(t)
        expect(countSegments(t).segments).toBe(ref.chunks.length)
        expect(countSegments(t).forcedBy).toEqual(referenceForced(t))
        expect(encodeSegments(t).segments.map((s) => Array.from(s))).toEqual(
          ref.chunks.map((c) => referenceBytes(c, ref.encoding))
        )
      }),
      { numRuns: 300 }
    )
  })
})

describe("single-segment texts near the limit", () => {
  it.each([154, 159, 160])("%i GSM-7 septets are sent as one segment, not cut at 153", (n) => {
    expect(encodeSegments(rep("a", n)).segments.map((s) => s.length)).toEqual([n])
  })

  it.each([68, 70])("%i UCS-2 units are sent as one segment, not cut at 67", (n) => {
    expect(encodeSegments(rep("ж", n)).segments.map((s) => s.length)).toEqual([2 * n])
  })

  it("lists exactly ten forcing characters without an `and N more`", () => {
    expect(describeSegments(countSegments("абвгдежзий"))).toBe(
      "text needs 1 segment in UCS-2 (at most 2 allowed); UCS-2 forced by: а, б, в, г, д, е, ж, з, и, й"
    )
  })
})
