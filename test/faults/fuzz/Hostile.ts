/**
 * Hostile values, as fast-check arbitraries: strings no field may store (NUL, unpaired
 * surrogates), huge and odd strings, JSON values of the wrong type and numbers out of range,
 * malformed or deeply nested bodies, path ids, query strings, content types, credentials,
 * Idempotency-Keys and methods. Whatever the service makes of them, it must answer with the
 * spec's error body, never a 500.
 */
import fc from "fast-check"

/** JSON text spliced in as is where a value is expected (numbers JSON.stringify cannot write). */
export class RawJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

/** A body value: any JSON value, or raw JSON text. */
export type BodyValue = unknown

const rawMarker = "\u0001raw:"

/** JSON text of `value`, RawJson pieces spliced in. */
export const toJsonText = (value: BodyValue): string => {
  const raws: Array<string> = []
  const text =
    JSON.stringify(value, (_key, v: unknown) => {
      if (v instanceof RawJson) {
        raws.push(v.text)
        return `${rawMarker}${raws.length - 1}`
      }
      return v
    }) ?? "null"
  return text.replace(/"\\u0001raw:(\d+)"/g, (_m, i: string) => raws[Number(i)]!)
}

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n))

/** Strings no text field may hold, or odd ones it may. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "a\u0000b",
    "\ud800",
    "\udfff",
    "x\ud800\ud800\udc00",
    "\udc00\ud800",
    "a\udbff",
    "😀",
    "\u202e\u202d",
    "\u2028\u2029",
    "\ufeff",
    "\uffff",
    "\ufffe",
    "",
    " ",
    "\t",
    "\r\n",
    "null",
    "%00",
    "\\u0000",
    "' OR 1=1 --",
    "$" + "{jndi:ldap://x}",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "0",
    "-1",
    "1e999",
    "+261340000001",
    "+2613400000011",
    "+26134000000",
    "261340000001",
    "+261 34 00 000 01",
    "+262340000001"
  ),
  fc.string({ unit: codeUnit, maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc
    .constantFrom(321, 1000, 4000, 60_000, 70_000)
    .chain((n) => fc.constantFrom("x", "é", "😀", "\u0000", "\ud800").map((c) => c.repeat(Math.ceil(n / c.length))))
)

/** Nested arrays or objects `depth` deep, as raw JSON. */
const nested = (depth: number, kind: "array" | "object") =>
  new RawJson(
    kind === "array" ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`
  )

/** JSON values of the wrong type, numbers out of range, deep nesting. */
export const hostileValue: fc.Arbitrary<BodyValue> = fc.oneof(
  hostileString,
  fc.constantFrom<BodyValue>(
    0,
    -1,
    1.5,
    -0,
    1e308,
    -1e308,
    2 ** 53,
    2 ** 63,
    -(2 ** 63),
    1_000_000_001,
    true,
    false,
    null,
    [],
    {},
    [1, 2],
    { $gt: "" },
    [null],
    ["+261340000001", "+261340000001"],
    { constructor: "x" }
  ),
  fc
    .constantFrom(
      "1e999",
      "-1e999",
      "9007199254740993",
      "9223372036854775807",
      "9223372036854775808",
      "-9223372036854775809",
      "1e-400",
      "0.0000000000000000000001",
      "123456789012345678901234567890",
      "-0.0",
      "1E2",
      "0e0"
    )
    .map((t) => new RawJson(t)),
  fc
    .tuple(fc.constantFrom(2, 100, 1000, 5000, 20_000), fc.constantFrom("array" as const, "object" as const))
    .map(([d, k]) => nested(d, k)),
  fc.double(),
  fc.integer(),
  fc.array(hostileString, { maxLength: 5 })
)

/** Whole bodies that are not a JSON object, or not JSON at all. */
export const hostileBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\n",
    "{",
    "}",
    '{"to":',
    "{'to':'x'}",
    '{"a":1,}',
    "[1,2",
    "nul",
    "NaN",
    '{"a":NaN}',
    '{"a":Infinity}',
    "\ufeff{}",
    "{}garbage",
    "{}{}",
    '{"a":"\\uZZZZ"}',
    '{"a":"\\ud800"}',
    '{"a":"\u0000"}',
    '"string"',
    "123",
    "true",
    "null",
    "[]",
    "[{}]",
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"to":"+261340000001","to":"+261340000002","text":"a"}',
    '{"text":"a"\u0000}',
    "\u0000",
    '{"a":1}\u0000'
  ),
  fc.constantFrom(2, 1000, 10_000, 32_000).map((d) => `${"[".repeat(d)}${"]".repeat(d)}`),
  fc.constantFrom(1000, 10_000).map((d) => `${'{"a":'.repeat(d)}1${"}".repeat(d)}`),
  fc.constantFrom(100, 5000).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`),
  fc.constantFrom(
    Uint8Array.from([0xff, 0xfe, 0x7b, 0x7d]),
    Uint8Array.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]),
    Uint8Array.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
    Buffer.from('{"text":"a"}', "utf16le")
  ),
  fc.uint8Array({ maxLength: 200 }),
  fc.string({ unit: codeUnit, maxLength: 200 }),
  fc.constantFrom(65 * 1024, 200 * 1024).map((n) => `{"text":"${"x".repeat(n)}"}`)
)

/** A path id, percent-encoded or not: NUL, `%`, bad UTF-8, overlong, unicode, traversal. */
export const hostileId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "%00",
    "a%00b",
    "%",
    "%2",
    "%ZZ",
    "%C0%80",
    "%ED%A0%80",
    "%ED%B0%80",
    "%F0%9F%98%80",
    "%FF",
    "%FE%FF",
    "%E9",
    "%2F",
    "..",
    ".",
    "%2E%2E",
    "%25",
    "%20",
    "+",
    "%2B",
    "null",
    "undefined",
    "0",
    "-1",
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "a;b",
    "a,b",
    "'",
    "%22",
    "%3Cscript%3E",
    "\u00e9",
    "~!$&'()*,;=:@",
    "%0A",
    "%0D%0A",
    "%C3%A9",
    "%E2%80%AE",
    "%EF%BF%BF",
    "x".repeat(5000),
    "%00".repeat(500),
    "%u0000",
    "%%30%30"
  ),
  fc.string({ unit: codeUnit, maxLength: 30 }).map((s) => encodeUtf16(s)),
  fc.uuid()
)

/** Percent-encodes every UTF-16 unit of `s`, lone surrogates as their (invalid) 3-byte UTF-8 form. */
export const encodeUtf16 = (s: string): string =>
  [...s]
    .map((ch) => {
      const code = ch.codePointAt(0)!
      if (code >= 0xd800 && code <= 0xdfff)
        return `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase()
      return encodeURIComponent(ch)
    })
    .join("")

/** A query string (without `?`) over parameters `names` and others. */
export const hostileQuery = (names: ReadonlyArray<string>): fc.Arbitrary<string> => {
  const name = fc.constantFrom(...names, "x")
  const single = fc
    .tuple(
      name,
      fc.oneof(
        hostileId,
        fc.constantFrom(
          "0",
          "101",
          "-1",
          "1.5",
          "1e2",
          "0x10",
          "",
          "NaN",
          "Infinity",
          "99999999999999999999",
          "bogus",
          "delivered",
          "1"
        )
      )
    )
    .map(([n, v]) => `${n}=${v}`)
  return fc.oneof(
    fc.array(single, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("&")),
    fc.constantFrom(
      "cursor[]=x",
      "cursor[a]=b",
      "%00=1",
      "&&&",
      "=",
      "?",
      "limit=1&limit=2",
      "cursor=a&cursor=b",
      "status=delivered&status=failed",
      "a=%E9",
      `cursor=${"x".repeat(8000)}`,
      "cursor",
      "limit"
    )
  )
}

export const hostileContentType: fc.Arbitrary<string | undefined> = fc.constantFrom(
  undefined,
  "",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "APPLICATION/JSON",
  "application/json;",
  "application/jsonp",
  "application/json-seq",
  "application/vnd.api+json",
  "application/*",
  "*/*",
  ";;;",
  "application/json\t",
  "application/json, text/plain",
  "application / json",
  "\u00ff",
  "json",
  'application/json; charset="utf-8"'
)

/** An Authorization header for a route wanting `valid` (undefined: no header). */
export const hostileAuthorization = (valid: string, others: ReadonlyArray<string>): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    fc.constantFrom(
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "Bearer svc_sms_",
      "Bearer svc_sms_.",
      "Bearer svc_sms_x.y",
      `bearer ${valid}`,
      `BEARER ${valid}`,
      `Bearer  ${valid}`,
      `Bearer ${valid} `,
      valid,
      `Basic ${Buffer.from(`${valid}:`).toString("base64")}`,
      `Bearer ${valid}x`,
      `Bearer ${valid.slice(0, -1)}`,
      `Bearer ${"a".repeat(8000)}`,
      "Bearer svc_sms_\u00e9.\u00e9",
      `Bearer ${valid},Bearer ${valid}`,
      "Bearer %00",
      `Bearer\t${valid}`,
      "Digest x"
    ),
    fc.constantFrom(...others).map((k) => `Bearer ${k}`)
  )

/** An Idempotency-Key header value (undefined: none). */
export const hostileIdempotencyKey: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constantFrom(
    undefined,
    "",
    " ",
    "a".repeat(128),
    "a".repeat(129),
    "\t\u00e9",
    "\u00e9",
    "key with spaces",
    "%00",
    "\u00ff".repeat(10)
  ),
  // a few keys reused across the run: replays, conflicts, requests still in progress
  fc.integer({ min: 1, max: 8 }).map((i) => `fuzz-shared-${i}`)
)

export const hostileAccept: fc.Arbitrary<string> = fc.constantFrom(
  "text/html",
  "application/json;q=0",
  "application/xml",
  "*/*;q=0",
  "",
  "application/*",
  ";;,,",
  "application/json;q=abc",
  "text/plain"
)

export const hostileRequestId: fc.Arbitrary<string> = fc.constantFrom("x".repeat(65), "\u00e9", "a b", "", "trace-1")

/** Methods other than a route's own: ones Node knows and routes, and tokens its parser refuses. */
export const otherMethod: fc.Arbitrary<string> = fc.constantFrom(
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "TRACE",
  "PROPFIND",
  "MKCOL",
  "PURGE",
  "SEARCH",
  "QUERY",
  "FOO",
  "BREW",
  "get",
  "M-SEARCH",
  "X",
  "ACL",
  "LINK"
)
