/**
 * Keywords on shared inbound numbers (docs/two-way.md, "Routing to an organisation" and the
 * operator API): the first word of the text (case, accents and punctuation ignored) names the
 * keyword, `"STOP <KEYWORD>"` routes like `"<KEYWORD> STOP"`; a keyword is one word of 1 to 20
 * letters or digits, held uppercased without accents.
 */
import { describe, expect, it } from "vitest"
import { keywordLengthMax, keywordOf, keywordProblem, normaliseKeyword } from "../../src/domain/Keywords.ts"

const problem = "must be one word of 1 to 20 letters or digits"

describe("keywordProblem", () => {
  it("takes one word of 1 to 20 letters or digits, in any case and with accents", () => {
    expect(keywordLengthMax).toBe(20)
    expect(keywordProblem("promo")).toBeUndefined()
    expect(keywordProblem("Prömo")).toBeUndefined()
    expect(keywordProblem("A")).toBeUndefined()
    expect(keywordProblem("2024")).toBeUndefined()
    expect(keywordProblem("x".repeat(20))).toBeUndefined()
    expect(keywordProblem(" promo ")).toBeUndefined()
  })

  it("names what a keyword must be for anything else", () => {
    expect(keywordProblem("")).toBe(problem)
    expect(keywordProblem("   ")).toBe(problem)
    expect(keywordProblem("two words")).toBe(problem)
    expect(keywordProblem("pro-mo")).toBe(problem)
    expect(keywordProblem("x".repeat(21))).toBe(problem)
    expect(keywordProblem("!?")).toBe(problem)
    expect(keywordProblem("жж")).toBe(problem)
  })
})

describe("normaliseKeyword", () => {
  it("holds a keyword uppercased, without accents or the spaces around", () => {
    expect(normaliseKeyword("Prömo")).toBe("PROMO")
    expect(normaliseKeyword(" arrêt ")).toBe("ARRET")
  })
})

describe("keywordOf", () => {
  it("names the held keyword that is the text's first word", () => {
    expect(keywordOf("promo", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("Info: thanks", ["PROMO", "INFO"])).toBe("INFO")
    expect(keywordOf("«Prömo», please", ["PROMO"])).toBe("PROMO")
  })

  it("names none when the first word is not held", () => {
    expect(keywordOf("", ["PROMO"])).toBeUndefined()
    expect(keywordOf("  !? ", ["PROMO"])).toBeUndefined()
    expect(keywordOf("promo", [])).toBeUndefined()
    expect(keywordOf("hello world", ["PROMO"])).toBeUndefined()
    expect(keywordOf("hello promo", ["PROMO"])).toBeUndefined()
    expect(keywordOf("promotion", ["PROMO"])).toBeUndefined()
  })

  it("names the second word when the first is a consent word", () => {
    expect(keywordOf("STOP PROMO", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("stop, promo!", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("start info", ["PROMO", "INFO"])).toBe("INFO")
    expect(keywordOf("Désabonner promo", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("STOP PROMO please", ["PROMO"])).toBe("PROMO")
  })

  it("names none when a consent word is followed by no held keyword", () => {
    expect(keywordOf("STOP", ["PROMO"])).toBeUndefined()
    expect(keywordOf("STOP INFO", ["PROMO"])).toBeUndefined()
    expect(keywordOf("STOP hello PROMO", ["PROMO"])).toBeUndefined()
  })

  it("prefers a first word that is itself held", () => {
    expect(keywordOf("STOP PROMO", ["STOP", "PROMO"])).toBe("STOP")
  })
})
