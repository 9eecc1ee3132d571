/**
 * Keywords on shared inbound numbers (docs/two-way.md): an
 * organisation holds a word on a number, and a text whose first word is that word (case and
 * accents ignored) is routed to it; `"STOP <KEYWORD>"` routes like `"<KEYWORD> STOP"`. Pure.
 */
import { consentWord, normaliseText, wordsOf } from "./Consent.ts"

/** Longest keyword, in characters. */
export const keywordLengthMax = 20

/** A keyword as it is held and compared: normalised like the words of a text. */
export const normaliseKeyword = (keyword: string): string => normaliseText(keyword)

/** What is wrong with `keyword` as one an organisation holds, or undefined. */
export const keywordProblem = (keyword: string): string | undefined => {
  const normal = normaliseKeyword(keyword)
  return /^[A-Z0-9]{1,20}$/u.test(normal) ? undefined : `must be one word of 1 to ${keywordLengthMax} letters or digits`
}

/**
 * The keyword among `held` (normalised) that `text` names: its first word, or its second when the
 * first is a consent word (`STOP PROMO` is `PROMO STOP`); undefined when it names none.
 */
export const keywordOf = (text: string, held: ReadonlyArray<string>): string | undefined => {
  const words = wordsOf(text)
  const [first, second] = words
  if (first !== undefined && held.includes(first)) return first
  if (first !== undefined && second !== undefined && consentWord(first) !== undefined && held.includes(second)) {
    return second
  }
  return undefined
}
