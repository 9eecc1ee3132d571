/**
 * The words people send to refuse an organisation's messages or to take them again, and the
 * rule that reads them (docs/two-way.md): after trimming, removing
 * punctuation and accents and uppercasing, a text whose only word, or whose first word followed
 * only by the organisation's keyword, is one of them. Pure.
 */

/** Words that opt the sender out of the organisation's messages (English, French, Malagasy). */
export const optOutWords = [
  "STOP",
  "STOPALL",
  "UNSUBSCRIBE",
  "CANCEL",
  "END",
  "QUIT",
  "ARRET",
  "ARRETER",
  "DESABONNER",
  "AJANONY",
  "ATSAHARO"
] as const

/** Words that opt the sender back in. */
export const optInWords = ["START", "UNSTOP"] as const

export type ConsentAction = "opt_out" | "opt_in"

/** What a text asks for, with the word that asked (stored as the inbound message's keyword). */
export interface ConsentRequest {
  readonly action: ConsentAction
  readonly word: string
}

const optOut: ReadonlySet<string> = new Set(optOutWords)
const optIn: ReadonlySet<string> = new Set(optInWords)

/** `text` without accents, punctuation or symbols, uppercased: what the words are read from. */
export const normaliseText = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/[\p{P}\p{S}]/gu, " ")
    .toUpperCase()
    .trim()

/** The words of `text`, normalised (normaliseText), in order. */
export const wordsOf = (text: string): ReadonlyArray<string> => {
  const normal = normaliseText(text)
  return normal === "" ? [] : normal.split(/\s+/u)
}

/** The action of one normalised word, if it is a consent word. */
export const consentWord = (word: string): ConsentAction | undefined =>
  optOut.has(word) ? "opt_out" : optIn.has(word) ? "opt_in" : undefined

/**
 * What `text` asks of the organisation it was routed to, whose keyword on the number is
 * `keyword` (normalised, null when it holds the number alone): the only word is a consent word,
 * or the first is one followed only by that keyword. Undefined: an ordinary message.
 */
export const consentRequest = (text: string, keyword: string | null): ConsentRequest | undefined => {
  const words = wordsOf(text)
  const first = words[0]
  if (first === undefined) return undefined
  const action = consentWord(first)
  if (action === undefined) return undefined
  if (words.length === 1 || (words.length === 2 && keyword !== null && words[1] === keyword)) {
    return { action, word: first }
  }
  return undefined
}
