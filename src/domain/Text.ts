/**
 * Text the service can store as it was sent. PostgreSQL refuses a NUL character in `text`
 * (22021) and cannot encode an unpaired UTF-16 surrogate as UTF-8 (it would fail, or be
 * replaced by U+FFFD), so every string field of both APIs refuses them before any SQL runs.
 */
import { Schema } from "effect"

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high
// one (the regex works on UTF-16 code units: no `u` flag). Equivalent to
// `s.includes("\0") || !s.isWellFormed()`, which the ES2023 lib this project targets lacks.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this looks for (PostgreSQL text cannot hold it)
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** True when `s` holds no NUL character and no unpaired surrogate. */
export const isStorableText = (s: string): boolean => !unstorable.test(s)

/** What a validation error says about a field that is not storable text. */
export const unstorableTextMessage = "must not contain NUL characters or unpaired UTF-16 surrogates"

// No JSON Schema keyword says it (the document's introduction does); without a representation
// of its own, the check would drop the annotations of every field built on it.
const storable = Schema.makeFilter((s: string) => isStorableText(s) || unstorableTextMessage, {
  toJsonSchema: () => ({})
})

/** A string field of either API: any text without NUL characters or unpaired surrogates. */
export const Text = Schema.String.check(storable)

/** Text whose annotations (a `format`, a description) the OpenAPI document shows as written. */
export const TextWith = (annotations: Schema.Annotations.Annotations) =>
  Schema.String.annotate(annotations).check(storable)
