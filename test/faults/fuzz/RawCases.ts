/**
 * Requests no HTTP client sends, as raw bytes on a connection of their own: bad request lines,
 * bad headers, methods Node's parser does not know, CONNECT, HEAD with a body, lying or broken
 * body framing, truncated bodies, pipelining; then seeded byte-level mutations of good requests.
 * Each case says which requests its bytes hold: each must get exactly one answer, and nothing
 * else may come back. The client half-closes once it has written (as `nc -N` does), so every
 * connection ends and the server sees where the bytes stop.
 */
import fc from "fast-check"
import type { Fixtures } from "./Fixtures.ts"

export interface RawCase {
  readonly name: string
  /** Written in order, each flushed before the next. */
  readonly chunks: ReadonlyArray<string | Uint8Array>
  /** The request each expected answer belongs to: its method (a HEAD answer has no body) and path ("" when unknown). */
  readonly requests: ReadonlyArray<{ readonly method: string; readonly path: string }>
}

const crlf = "\r\n"
const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))))

const one = (name: string, method: string, path: string, ...chunks: ReadonlyArray<string | Uint8Array>): RawCase => ({
  name,
  chunks,
  requests: [{ method, path }]
})
const garbage = { method: "-", path: "" }

/** The handwritten cases; `f` gives them real credentials, so that bodies are read past authentication. */
export const rawCases = (f: Fixtures): ReadonlyArray<RawCase> => {
  const auth = `Authorization: Bearer ${f.keys.full}${crlf}`
  const op = `Authorization: Bearer ${f.operatorToken}${crlf}`
  const contacts = "/api/sms/v2/contacts/"
  const post = (path: string, headers: string, body: string) =>
    `POST ${path} HTTP/1.1${crlf}Host: x${crlf}${auth}Content-Type: application/json${crlf}${headers}${crlf}${body}`
  const contact = JSON.stringify({ phone_number: "+261340000001", first_name: "Rabe" })
  return [
    // request lines
    one("garbage", "-", "", `GARBAGE${crlf}${crlf}`),
    one("method only", "-", "", `GET${crlf}${crlf}`),
    one("HTTP/0.9 request line", "-", "", `GET /health${crlf}${crlf}`),
    one("extra token on the request line", "-", "", `GET /health HTTP/1.1 extra${crlf}Host: x${crlf}${crlf}`),
    one("lower-case method", "get", "/health", `get /health HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("two spaces after the method", "-", "", `GET  /health HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("tabs for spaces", "-", "", `GET\t/health\tHTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("absolute form", "GET", "", `GET http://example.com/health HTTP/1.1${crlf}Host: example.com${crlf}${crlf}`),
    one("asterisk form", "OPTIONS", "", `OPTIONS * HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("target without a slash", "GET", "", `GET health HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("HTTP/2.0", "-", "", `GET /health HTTP/2.0${crlf}Host: x${crlf}${crlf}`),
    one("HTTP/1.2", "-", "", `GET /health HTTP/1.2${crlf}Host: x${crlf}${crlf}`),
    one("HTTP/2 preface", "-", "", `PRI * HTTP/2.0${crlf}${crlf}SM${crlf}${crlf}`),
    one("NUL in the target", "-", "", bytes("GET /he", [0], `alth HTTP/1.1${crlf}Host: x${crlf}${crlf}`)),
    one("DEL in the target", "-", "", bytes("GET /he", [0x7f], `alth HTTP/1.1${crlf}Host: x${crlf}${crlf}`)),
    one(
      "bytes that are not UTF-8 in the target",
      "GET",
      "",
      bytes("GET /", [0xff, 0xfe], ` HTTP/1.1${crlf}Host: x${crlf}${crlf}`)
    ),
    one("raw UTF-8 in the target", "GET", "", bytes("GET /caf", [0xc3, 0xa9], ` HTTP/1.1${crlf}Host: x${crlf}${crlf}`)),
    one(
      "raw surrogate bytes in a path id",
      "GET",
      "/api/sms/v2/messages/x/",
      bytes("GET /api/sms/v2/messages/", [0xed, 0xa0, 0x80], `/ HTTP/1.1${crlf}Host: x${crlf}${auth}${crlf}`)
    ),
    one("NUL in the query", "-", "", bytes("GET /health?a=", [0], ` HTTP/1.1${crlf}Host: x${crlf}${crlf}`)),
    one("leading empty lines", "GET", "/health", `${crlf}${crlf}GET /health HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("bare LF line endings", "GET", "/health", "GET /health HTTP/1.1\nHost: x\n\n"),
    one("a 20 KB target", "-", "", `GET /health?${"a".repeat(20_000)} HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one(
      "an 8 KB path id",
      "GET",
      "/api/sms/v2/messages/x/",
      `GET /api/sms/v2/messages/${"%00".repeat(2700)}/ HTTP/1.1${crlf}Host: x${crlf}${auth}${crlf}`
    ),
    // headers
    one("space in a header name", "-", "", `GET /health HTTP/1.1${crlf}Host: x${crlf}Bad Header: y${crlf}${crlf}`),
    one(
      "non-ASCII header name",
      "-",
      "",
      bytes(`GET /health HTTP/1.1${crlf}Host: x${crlf}H`, [0xc3, 0xa9], `ader: y${crlf}${crlf}`)
    ),
    one("header without a name", "-", "", `GET /health HTTP/1.1${crlf}Host: x${crlf}: novalue${crlf}${crlf}`),
    one("header without a colon", "-", "", `GET /health HTTP/1.1${crlf}Host: x${crlf}NoColon${crlf}${crlf}`),
    one(
      "NUL in a header value",
      "-",
      "",
      bytes(`GET /health HTTP/1.1${crlf}Host: x${crlf}X-A: a`, [0], `b${crlf}${crlf}`)
    ),
    one("bare CR in a header value", "-", "", `GET /health HTTP/1.1${crlf}Host: x${crlf}X-A: a\rb${crlf}${crlf}`),
    one("folded header line", "-", "", `GET /health HTTP/1.1${crlf}Host: x${crlf}X-A: a${crlf} folded${crlf}${crlf}`),
    one(
      "headers over Node's limit",
      "-",
      "",
      `GET /health HTTP/1.1${crlf}Host: x${crlf}X-Big: ${"a".repeat(20_000)}${crlf}${crlf}`
    ),
    one(
      "3000 small headers",
      "-",
      "",
      `GET /health HTTP/1.1${crlf}Host: x${crlf}${Array.from({ length: 3000 }, (_, i) => `X-${i}: ${i}${crlf}`).join("")}${crlf}`
    ),
    one(
      "two different Content-Lengths",
      "-",
      "",
      post(contacts, `Content-Length: 2${crlf}Content-Length: 3${crlf}`, "{}")
    ),
    one("negative Content-Length", "-", "", post(contacts, `Content-Length: -1${crlf}`, "")),
    one("Content-Length in exponent form", "-", "", post(contacts, `Content-Length: 1e3${crlf}`, "")),
    one(
      "Content-Length and chunked",
      "-",
      "",
      post(contacts, `Content-Length: 3${crlf}Transfer-Encoding: chunked${crlf}`, `0${crlf}${crlf}`)
    ),
    one("Transfer-Encoding gzip", "-", "", post(contacts, `Transfer-Encoding: gzip${crlf}`, "{}")),
    one(
      "Transfer-Encoding chunked, gzip",
      "-",
      "",
      post(contacts, `Transfer-Encoding: chunked, gzip${crlf}`, `2${crlf}{}${crlf}0${crlf}${crlf}`)
    ),
    one("Host twice", "GET", "/health", `GET /health HTTP/1.1${crlf}Host: x${crlf}Host: y${crlf}${crlf}`),
    one(
      "UTF-8 bytes in Authorization",
      "GET",
      "/api/sms/v2/balance/",
      bytes(
        `GET /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}Authorization: Bearer svc_sms_`,
        [0xc3, 0xa9],
        `.x${crlf}${crlf}`
      )
    ),
    one(
      "UTF-8 bytes in Idempotency-Key",
      "POST",
      "/api/sms/v2/messages/",
      bytes(
        `POST /api/sms/v2/messages/ HTTP/1.1${crlf}Host: x${crlf}${auth}Content-Type: application/json${crlf}Content-Length: 2${crlf}Idempotency-Key: cl`,
        [0xc3, 0xa9],
        `${crlf}${crlf}{}`
      )
    ),
    one(
      "UTF-8 bytes in X-Request-Id",
      "GET",
      "/health",
      bytes(`GET /health HTTP/1.1${crlf}Host: x${crlf}X-Request-Id: `, [0xe2, 0x98, 0x83], `${crlf}${crlf}`)
    ),
    one(
      "Expect: 100-continue with a body",
      "POST",
      contacts,
      post(contacts, `Expect: 100-continue${crlf}Content-Length: ${contact.length}${crlf}`, contact)
    ),
    one(
      "Expect: something else",
      "GET",
      "/health",
      `GET /health HTTP/1.1${crlf}Host: x${crlf}Expect: bogus${crlf}${crlf}`
    ),
    one(
      "Upgrade: websocket",
      "GET",
      "/health",
      `GET /health HTTP/1.1${crlf}Host: x${crlf}Connection: Upgrade${crlf}Upgrade: websocket${crlf}Sec-WebSocket-Version: 13${crlf}Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==${crlf}${crlf}`
    ),
    one(
      "Upgrade: h2c",
      "GET",
      "/health",
      `GET /health HTTP/1.1${crlf}Host: x${crlf}Connection: Upgrade, HTTP2-Settings${crlf}Upgrade: h2c${crlf}HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA${crlf}${crlf}`
    ),
    // methods
    one(
      "CONNECT to an authority",
      "CONNECT",
      "",
      `CONNECT example.com:443 HTTP/1.1${crlf}Host: example.com:443${crlf}${crlf}`
    ),
    one("CONNECT to a route", "CONNECT", "", `CONNECT /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("an unknown method on a route", "FOO", "", `FOO /api/sms/v2/messages/ HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("an unknown method elsewhere", "BREW", "", `BREW /pot HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one(
      "an unknown method with a body",
      "FOO",
      "",
      `FOO ${contacts} HTTP/1.1${crlf}Host: x${crlf}Content-Length: 2${crlf}${crlf}{}`
    ),
    one("M-SEARCH", "M-SEARCH", "", `M-SEARCH * HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("TRACE", "TRACE", "/health", `TRACE /health HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one(
      "HEAD with a body",
      "HEAD",
      "/api/sms/v2/balance/",
      `HEAD /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}Content-Length: 5${crlf}${crlf}hello`
    ),
    one(
      "HEAD with a broken chunked body",
      "HEAD",
      "/api/sms/v2/balance/",
      `HEAD /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}Transfer-Encoding: chunked${crlf}${crlf}zz${crlf}`
    ),
    one(
      "HEAD with a bad Content-Length",
      "HEAD",
      "",
      `HEAD /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}Content-Length: abc${crlf}${crlf}`
    ),
    one("HEAD on no route", "HEAD", "/nothing", `HEAD /nothing HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one("HEAD on a POST route", "HEAD", contacts, `HEAD ${contacts} HTTP/1.1${crlf}Host: x${crlf}${crlf}`),
    one(
      "HEAD on an operator route",
      "HEAD",
      "/admin/v1/clock",
      `HEAD /admin/v1/clock HTTP/1.1${crlf}Host: x${crlf}${op}${crlf}`
    ),
    one(
      "DELETE with a body",
      "DELETE",
      "/api/sms/v2/balance/",
      `DELETE /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}Content-Length: 2${crlf}${crlf}{}`
    ),
    // bodies
    one("a body cut short", "POST", contacts, post(contacts, `Content-Length: 50${crlf}`, '{"phone_number":')),
    one(
      "a body cut short, no credentials",
      "POST",
      contacts,
      `POST ${contacts} HTTP/1.1${crlf}Host: x${crlf}Content-Type: application/json${crlf}Content-Length: 50${crlf}${crlf}{"a":`
    ),
    one(
      "a body cut short on a creation",
      "POST",
      "/api/sms/v2/messages/",
      post("/api/sms/v2/messages/", `Idempotency-Key: raw-cut${crlf}Content-Length: 80${crlf}`, '{"to":"+261340000001"')
    ),
    one(
      "a body cut short on an operator route",
      "POST",
      "/admin/v1/organizations",
      `POST /admin/v1/organizations HTTP/1.1${crlf}Host: x${crlf}${op}Content-Type: application/json${crlf}Content-Length: 40${crlf}${crlf}{"name":`
    ),
    one(
      "a chunk size that is not hex",
      "POST",
      contacts,
      post(contacts, `Transfer-Encoding: chunked${crlf}`, `zz${crlf}`)
    ),
    one(
      "a chunk size that is not hex, no credentials",
      "POST",
      contacts,
      `POST ${contacts} HTTP/1.1${crlf}Host: x${crlf}Transfer-Encoding: chunked${crlf}${crlf}zz${crlf}`
    ),
    one(
      "a chunk size beyond 64 bits",
      "POST",
      contacts,
      post(contacts, `Transfer-Encoding: chunked${crlf}`, `fffffffffffffffffffff${crlf}`)
    ),
    one(
      "a chunk without its CRLF",
      "POST",
      contacts,
      post(contacts, `Transfer-Encoding: chunked${crlf}`, `2${crlf}{}XX0${crlf}${crlf}`)
    ),
    one(
      "chunks without the last one",
      "POST",
      contacts,
      post(contacts, `Transfer-Encoding: chunked${crlf}`, `2${crlf}{}${crlf}`)
    ),
    one(
      "a chunk extension over the limit",
      "POST",
      contacts,
      post(contacts, `Transfer-Encoding: chunked${crlf}`, `2;${"x".repeat(20_000)}${crlf}{}${crlf}0${crlf}${crlf}`)
    ),
    one(
      "chunked JSON with a trailer",
      "POST",
      contacts,
      post(
        contacts,
        `Transfer-Encoding: chunked${crlf}`,
        `${contact.length.toString(16)}${crlf}${contact}${crlf}0${crlf}X-Trailer: 1${crlf}${crlf}`
      )
    ),
    one(
      "a chunked body over 64 KiB",
      "POST",
      contacts,
      post(
        contacts,
        `Transfer-Encoding: chunked${crlf}`,
        `${(70_000).toString(16)}${crlf}${"x".repeat(70_000)}${crlf}0${crlf}${crlf}`
      )
    ),
    {
      name: "a body longer than its Content-Length: the rest is a second request",
      chunks: [post(contacts, `Content-Length: 2${crlf}`, `{}GARBAGE${crlf}${crlf}`)],
      requests: [{ method: "POST", path: contacts }, garbage]
    },
    // pipelining and pacing
    {
      name: "two requests pipelined",
      chunks: [
        `GET /health HTTP/1.1${crlf}Host: x${crlf}${crlf}GET /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}${crlf}`
      ],
      requests: [
        { method: "GET", path: "/health" },
        { method: "GET", path: "/api/sms/v2/balance/" }
      ]
    },
    {
      name: "a good request then garbage",
      chunks: [`GET /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}${crlf}GARBAGE${crlf}${crlf}`],
      requests: [{ method: "GET", path: "/api/sms/v2/balance/" }, garbage]
    },
    {
      name: "a POST then an unknown method",
      chunks: [
        post(contacts, `Content-Length: ${contact.length}${crlf}`, contact),
        `FOO /health HTTP/1.1${crlf}Host: x${crlf}${crlf}`
      ],
      requests: [
        { method: "POST", path: contacts },
        { method: "FOO", path: "" }
      ]
    },
    {
      name: "HEAD then GET pipelined",
      chunks: [
        `HEAD /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}${crlf}GET /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}${crlf}`
      ],
      requests: [
        { method: "HEAD", path: "/api/sms/v2/balance/" },
        { method: "GET", path: "/api/sms/v2/balance/" }
      ]
    },
    {
      name: "ten requests pipelined",
      chunks: [
        Array.from({ length: 10 }, () => `GET /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}${auth}${crlf}`).join(
          ""
        )
      ],
      requests: Array.from({ length: 10 }, () => ({ method: "GET", path: "/api/sms/v2/balance/" }))
    },
    {
      name: "headers split mid-line",
      chunks: [`GET /api/sms/v2/bal`, `ance/ HTTP/1.1${crlf}Ho`, `st: x${crlf}${auth}${crlf}`],
      requests: [{ method: "GET", path: "/api/sms/v2/balance/" }]
    },
    {
      name: "a request one byte at a time",
      chunks: [...`GET /health HTTP/1.1${crlf}Host: x${crlf}${crlf}`],
      requests: [{ method: "GET", path: "/health" }]
    },
    { name: "headers cut short", chunks: [`GET /health HTTP/1.1${crlf}Host`], requests: [garbage] },
    { name: "request line cut short", chunks: ["GET /heal"], requests: [garbage] },
    one("HTTP/1.0 without Host", "GET", "/api/sms/v2/balance/", `GET /api/sms/v2/balance/ HTTP/1.0${crlf}${crlf}`),
    one("HTTP/1.0 keep-alive", "GET", "/health", `GET /health HTTP/1.0${crlf}Connection: keep-alive${crlf}${crlf}`)
  ]
}

/** Good requests the mutations start from: each is one request, without a body length to wait for. */
const seeds = (f: Fixtures): ReadonlyArray<readonly [string, string]> => [
  ["/health", `GET /health HTTP/1.1${crlf}Host: x${crlf}${crlf}`],
  [
    "/api/sms/v2/balance/",
    `GET /api/sms/v2/balance/ HTTP/1.1${crlf}Host: x${crlf}Authorization: Bearer ${f.keys.full}${crlf}${crlf}`
  ],
  [
    `/api/sms/v2/messages/${f.messageIds[0]}/`,
    `GET /api/sms/v2/messages/${f.messageIds[0]}/ HTTP/1.1${crlf}Host: x${crlf}Authorization: Bearer ${f.keys.full}${crlf}Accept: application/json${crlf}${crlf}`
  ],
  [
    `/admin/v1/organizations/${f.orgs.main}`,
    `GET /admin/v1/organizations/${f.orgs.main} HTTP/1.1${crlf}Host: x${crlf}Authorization: Bearer ${f.operatorToken}${crlf}${crlf}`
  ]
]

const mutation = (request: string): fc.Arbitrary<readonly [string, Uint8Array]> => {
  const raw = Buffer.from(request, "latin1")
  const at = fc.integer({ min: 0, max: raw.length - 1 })
  const byte = fc.oneof(
    fc.integer({ min: 0, max: 255 }),
    fc.constantFrom(0, 9, 10, 13, 32, 0x7f, 0x80, 0xff, 0x25, 0x3a)
  )
  return fc.oneof(
    fc
      .tuple(at, byte)
      .map(
        ([i, b]) =>
          [`byte ${i} set to ${b}`, Buffer.concat([raw.subarray(0, i), Buffer.from([b]), raw.subarray(i + 1)])] as const
      ),
    fc
      .tuple(at, byte)
      .map(
        ([i, b]) =>
          [
            `byte ${b} inserted at ${i}`,
            Buffer.concat([raw.subarray(0, i), Buffer.from([b]), raw.subarray(i)])
          ] as const
      ),
    at.map((i) => [`byte ${i} removed`, Buffer.concat([raw.subarray(0, i), raw.subarray(i + 1)])] as const),
    at.map((i) => [`cut at ${i}`, raw.subarray(0, Math.max(1, i))] as const),
    fc
      .tuple(at, fc.constantFrom("\r\n", "\r\n\r\n", "%", "%00", " ", "\u00e9", ":", "HTTP/1.1"))
      .map(
        ([i, s]) =>
          [
            `${JSON.stringify(s)} inserted at ${i}`,
            Buffer.concat([raw.subarray(0, i), Buffer.from(s, "latin1"), raw.subarray(i)])
          ] as const
      )
  )
}

/**
 * `count` seeded mutations of good requests. A mutation may split one request into two, so
 * these cases expect at least one answer and at most one more than the blank lines they hold.
 */
export const mutatedCases = (
  f: Fixtures,
  count: number,
  seed: number
): ReadonlyArray<RawCase & { readonly upTo: number }> =>
  fc
    .sample(
      fc
        .constantFrom(...seeds(f))
        .chain(([path, request]) => mutation(request).map(([what, raw]) => ({ path, what, raw }))),
      { seed, numRuns: count }
    )
    .map(({ path, what, raw }) => ({
      name: `mutated ${path}: ${what}`,
      chunks: [raw],
      requests: [{ method: "-", path: "" }],
      // an inserted blank line ends a request early: what follows is another one
      upTo: Buffer.from(raw)
        .toString("latin1")
        .split(/\r?\n\r?\n/).length
    }))
