/** The consent words and keywords (src/domain/Consent.ts, Keywords.ts): the rule that reads them, in its edge cases. */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { consentRequest, optInWords, optOutWords, wordsOf } from "../../src/domain/Consent.ts"
import { keywordOf, keywordProblem, normaliseKeyword } from "../../src/domain/Keywords.ts"

describe("consentRequest", () => {
  it("reads every opt-out and opt-in word as the only word", () => {
    for (const w of optOutWords) expect(consentRequest(w, null)).toEqual({ action: "opt_out", word: w })
    for (const w of optInWords) expect(consentRequest(w, null)).toEqual({ action: "opt_in", word: w })
  })

  it("ignores case, accents, punctuation and the spaces around", () => {
    expect(consentRequest("  stop!  ", null)).toEqual({ action: "opt_out", word: "STOP" })
    expect(consentRequest("Arrêt.", null)).toEqual({ action: "opt_out", word: "ARRET" })
    expect(consentRequest("Désabonner", null)).toEqual({ action: "opt_out", word: "DESABONNER" })
    expect(consentRequest("ajanony", null)).toEqual({ action: "opt_out", word: "AJANONY" })
    expect(consentRequest("«Start»", null)).toEqual({ action: "opt_in", word: "START" })
  })

  it("takes the first word followed only by the organisation's keyword", () => {
    expect(consentRequest("STOP promo", "PROMO")).toEqual({ action: "opt_out", word: "STOP" })
    expect(consentRequest("stop Prömo!", "PROMO")).toEqual({ action: "opt_out", word: "STOP" })
    expect(consentRequest("STOP PROMO", null)).toBeUndefined()
    expect(consentRequest("STOP OTHER", "PROMO")).toBeUndefined()
    expect(consentRequest("STOP PROMO now", "PROMO")).toBeUndefined()
  })

  it("leaves ordinary messages alone, a consent word elsewhere included", () => {
    expect(consentRequest("", null)).toBeUndefined()
    expect(consentRequest("  ?! ", null)).toBeUndefined()
    expect(consentRequest("please stop", null)).toBeUndefined()
    expect(consentRequest("stop sending me this", null)).toBeUndefined()
    expect(consentRequest("STOPPED", null)).toBeUndefined()
    expect(consentRequest("PROMO STOP", "PROMO")).toBeUndefined()
  })

  it("property: a consent word with any surrounding punctuation and case is read", () => {
    const words = [...optOutWords, ...optInWords]
    fc.assert(
      fc.property(
        fc.constantFrom(...words),
        fc.constantFrom("", " ", "!", ".", "  ", "...", "\n"),
        fc.constantFrom("", " ", "!", ".", "?"),
        fc.boolean(),
        (word, before, after, lower) => {
          const r = consentRequest(`${before}${lower ? word.toLowerCase() : word}${after}`, null)
          expect(r?.word).toBe(word)
        }
      )
    )
  })
})

describe("keywords", () => {
  it("matches the first word, case and accents ignored", () => {
    expect(keywordOf("promo please", ["PROMO", "INFO"])).toBe("PROMO")
    expect(keywordOf("Prömo", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("info, thanks", ["PROMO", "INFO"])).toBe("INFO")
    expect(keywordOf("hello promo", ["PROMO"])).toBeUndefined()
    expect(keywordOf("", ["PROMO"])).toBeUndefined()
  })

  it("routes STOP <KEYWORD> like <KEYWORD> STOP", () => {
    expect(keywordOf("STOP PROMO", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("PROMO STOP", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("arret promo", ["PROMO"])).toBe("PROMO")
    expect(keywordOf("hello PROMO", ["PROMO"])).toBeUndefined()
  })

  it("holds keywords normalised, one word of letters or digits", () => {
    expect(normaliseKeyword("Prömo")).toBe("PROMO")
    expect(keywordProblem("promo")).toBeUndefined()
    expect(keywordProblem("two words")).toBeDefined()
    expect(keywordProblem("")).toBeDefined()
    expect(keywordProblem("x".repeat(21))).toBeDefined()
  })

  it("splits words on any space", () => {
    expect(wordsOf(" a\tb\n c ")).toEqual(["A", "B", "C"])
  })
})

describe("wordsOf", () => {
  it("finds no word in an empty text or one of spaces, punctuation and symbols", () => {
    expect(wordsOf("")).toEqual([])
    expect(wordsOf("   ")).toEqual([])
    expect(wordsOf("  ?! ")).toEqual([])
    expect(wordsOf("€ + ©")).toEqual([])
  })

  it("reads punctuation and symbols as spaces between words", () => {
    expect(wordsOf("stop,promo")).toEqual(["STOP", "PROMO"])
    expect(wordsOf("stop.promo!")).toEqual(["STOP", "PROMO"])
    expect(wordsOf("a+b€c$d")).toEqual(["A", "B", "C", "D"])
    expect(wordsOf("«arrêt»-promo")).toEqual(["ARRET", "PROMO"])
  })
})

describe("consentRequest: two words", () => {
  it("reads a consent word and the keyword separated by punctuation or a symbol as two words", () => {
    expect(consentRequest("STOP,PROMO", "PROMO")).toEqual({ action: "opt_out", word: "STOP" })
    expect(consentRequest("stop+promo", "PROMO")).toEqual({ action: "opt_out", word: "STOP" })
    expect(consentRequest("start/promo", "PROMO")).toEqual({ action: "opt_in", word: "START" })
  })

  it("reads a consent word followed by anything but the keyword as an ordinary message", () => {
    expect(consentRequest("STOP STOP", "PROMO")).toBeUndefined()
    expect(consentRequest("STOP PROMO", "INFO")).toBeUndefined()
    expect(consentRequest("START PROMO", null)).toBeUndefined()
    expect(consentRequest("PROMO", "PROMO")).toBeUndefined()
  })
})
