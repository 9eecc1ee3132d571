/**
 * JSON that keeps 64-bit integers exact. `JSON.parse` rounds integers beyond 2^53; with the
 * reviver's access to the source text (Node >= 21) chosen fields become `bigint` instead, and
 * `JSON.rawJSON` writes a `bigint` back as a bare number.
 */
interface ReviverContext {
  readonly source?: string
}
type Reviver = (this: unknown, key: string, value: unknown, context?: ReviverContext) => unknown
const parseWithSource = JSON.parse as (text: string, reviver: Reviver) => unknown
const rawJSON = (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON

const integerLiteral = /^-?(0|[1-9]\d*)$/

/**
 * Parses `text`, turning every integer literal held by a key in `bigintKeys` into a `bigint`
 * (other values are left as `JSON.parse` gives them). Throws SyntaxError like `JSON.parse`.
 */
export const parseLossless = (text: string, bigintKeys: ReadonlySet<string>): unknown =>
  parseWithSource(text, (key, value, context) =>
    typeof value === "number" &&
    bigintKeys.has(key) &&
    context?.source !== undefined &&
    integerLiteral.test(context.source)
      ? BigInt(context.source)
      : value
  )

/** `JSON.stringify` that writes `bigint` values as exact JSON numbers. */
export const stringifyLossless = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? rawJSON(v.toString()) : v))
