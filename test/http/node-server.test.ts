// What Node's HTTP parser refuses or never routes, against a real listening server over raw
// sockets: every answer is the spec's error body with an X-Request-Id, never plain text or silence.
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer, type Server } from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { httpAppLayer, routes } from "../../src/app/HttpApp.ts"
import { answerNodeRefusals, answerWhileStarting, nodeServerLayer } from "../../src/http/NodeServer.ts"
import { appServices } from "../support/AppServices.ts"
import { adminToken, organisationFactory, remoteCaller } from "../support/TestApp.ts"

interface RawReply {
  readonly status: number
  readonly headers: Record<string, string>
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body
  readonly body: any
  readonly raw: string
}

/** Splits the first HTTP/1.1 response of `raw` (Content-Length framed or chunked-free). */
const parseReply = (raw: string): RawReply => {
  const end = raw.indexOf("\r\n\r\n")
  const [statusLine, ...headerLines] = raw.slice(0, end).split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(":")
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  const length = Number(headers["content-length"] ?? "0")
  const text = raw.slice(end + 4, end + 4 + length)
  return { status: Number(statusLine!.split(" ")[1]), headers, body: text === "" ? undefined : JSON.parse(text), raw }
}

/** Writes `bytes` on a new connection (then half-closes it if asked) and collects everything until the server closes it (or 5 s). */
const exchange = (port: number, bytes: string | Buffer, halfClose = false) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => (halfClose ? socket.end(bytes) : socket.write(bytes)))
    const chunks: Array<Buffer> = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no end of answer: ${Buffer.concat(chunks).toString("latin1").slice(0, 200)}`))
    }, 5000)
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("close", () => {
      clearTimeout(timer)
      resolve(Buffer.concat(chunks).toString("latin1"))
    })
    socket.on("error", () => {})
  })

const expectErrorReply = (reply: RawReply, status: number, code: string) => {
  expect({ status: reply.status, code: reply.body?.error?.code }, reply.raw.slice(0, 300)).toEqual({ status, code })
  expect(reply.headers["content-type"]).toMatch(/^application\/json/)
  expect(Object.keys(reply.body)).toEqual(["error"])
  expect(Object.keys(reply.body.error).sort()).toEqual(["code", "message"])
  expect(reply.body.error.message.length).toBeGreaterThan(0)
  expect(reply.headers["x-request-id"]).toMatch(/^[!-~]{1,64}$/)
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
}

const scope = Effect.runSync(Scope.make())
let port: number
beforeAll(async () => {
  const app = HttpRouter.serve(httpAppLayer, { disableLogger: true }).pipe(
    Layer.provideMerge(nodeServerLayer(routes, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(appServices())
  )
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  port = address.port
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const ask = async (bytes: string) => parseReply(await exchange(port, bytes))

describe("what Node's parser refuses gets the error body", () => {
  it("CONNECT to an authority: 405 method_not_allowed with an empty Allow", async () => {
    const reply = await ask("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
    expectErrorReply(reply, 405, "method_not_allowed")
    expect(reply.headers.allow).toBe("")
  })

  it("CONNECT to a route: 405 with the route's Allow, the client's X-Request-Id kept", async () => {
    const reply = await ask("CONNECT /api/sms/v2/balance/ HTTP/1.1\r\nHost: x\r\nX-Request-Id: trace-77\r\n\r\n")
    expectErrorReply(reply, 405, "method_not_allowed")
    expect(reply.headers.allow).toBe("GET")
    expect(reply.headers["x-request-id"]).toBe("trace-77")
  })

  it.each([
    [
      "a method Node does not know on a route: 405 with Allow",
      "FOO /api/sms/v2/messages/ HTTP/1.1\r\nHost: x\r\n\r\n",
      405,
      "method_not_allowed"
    ],
    ["a method Node does not know elsewhere: 404", "FOO /nothing HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"],
    ["a garbage request line", "GARBAGE\r\n\r\n", 400, "bad_request"],
    ["an invalid header name", "GET /health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400, "bad_request"],
    ["a NUL in the request target", "GET /a\u0000b HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"],
    ["an unknown HTTP version", "GET /health HTTP/9.9\r\nHost: x\r\n\r\n", 400, "bad_request"],
    ["an HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "bad_request"],
    [
      "both Content-Length and Transfer-Encoding",
      "POST /api/sms/v2/contacts/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      400,
      "bad_request"
    ],
    [
      "headers over Node's limit",
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      431,
      "headers_too_large"
    ]
  ])("%s: %s %s", async (_name, bytes, status, code) => {
    const reply = await ask(bytes)
    expectErrorReply(reply, status, code)
    // the only 405 of the table is on POST /api/sms/v2/messages/
    if (status === 405) expect(reply.headers.allow).toBe("POST")
  })

  it("a malformed request pipelined after a good one is answered after it", async () => {
    const raw = await exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n")
    expect(raw.startsWith("HTTP/1.1 200")).toBe(true)
    expectErrorReply(parseReply(raw.slice(raw.indexOf("HTTP/1.1", 1))), 400, "bad_request")
  })

  it("an unknown method pipelined after a good request is judged on its own request line", async () => {
    const raw = await exchange(
      port,
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\nFOO /api/sms/v2/balance/ HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    const second = parseReply(raw.slice(raw.indexOf("HTTP/1.1", 1)))
    expectErrorReply(second, 405, "method_not_allowed")
    expect(second.headers.allow).toBe("GET")
  })

  it("a malformed request after a good one on a kept-alive connection is answered", async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
      let text = ""
      socket.on("data", (chunk) => {
        const first = text === ""
        text += chunk.toString("latin1")
        if (first) socket.write("GARBAGE\r\n\r\n")
      })
      socket.on("close", () => resolve(text))
      socket.on("error", reject)
    })
    expect(raw.startsWith("HTTP/1.1 200")).toBe(true)
    expectErrorReply(parseReply(raw.slice(raw.indexOf("HTTP/1.1", 1))), 400, "bad_request")
  })

  it("a request without Host, or with an Expect the service has no use for, is served", async () => {
    const noHost = parseReply(await exchange(port, "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"))
    expect(noHost.status, noHost.raw).toBe(200)
    const expectation = parseReply(
      await exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\nExpect: something\r\nConnection: close\r\n\r\n")
    )
    expect(expectation.status, expectation.raw).toBe(200)
  })

  it("a method Node knows but no route has (PROPFIND) goes through the edge: 405 JSON", async () => {
    const reply = await ask("PROPFIND /api/sms/v2/balance/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    expectErrorReply(reply, 405, "method_not_allowed")
  })
})

/** The HTTP/1.1 answers in `raw`, in order (Content-Length framed), asserting nothing follows them. */
const allReplies = (raw: string): Array<RawReply> => {
  const replies: Array<RawReply> = []
  let rest = raw
  while (rest.startsWith("HTTP/1.1 ")) {
    const reply = parseReply(rest)
    replies.push(reply)
    rest = rest.slice(rest.indexOf("\r\n\r\n") + 4 + Number(reply.headers["content-length"] ?? "0"))
  }
  expect(rest, "bytes after the answers").toBe("")
  return replies
}

describe("a request whose body breaks after it was routed, a client that half-closes", () => {
  const contacts = "POST /api/sms/v2/contacts/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
  let apiKey: string
  beforeAll(async () => {
    const call = remoteCaller(`http://127.0.0.1:${port}`)
    const admin = (method: string, path: string, body?: unknown) =>
      call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })
    apiKey = (await organisationFactory(admin)({ credits: 5 })).apiKey
  })

  it("a broken chunk after the headers: one answer, never the route's then the parser's", async () => {
    const replies = allReplies(await exchange(port, `${contacts}Transfer-Encoding: chunked\r\n\r\nzz\r\n`))
    expect(replies).toHaveLength(1)
    // the route may answer first (its 401 does not wait for the body), else the parser's refusal goes out
    expect([401, 400]).toContain(replies[0]!.status)
    expect(Object.keys(replies[0]!.body)).toEqual(["error"])
  })

  it("a body cut short by the client's half-close while its handler waits for it: one answer, 400 bad_request", async () => {
    const raw = await exchange(
      port,
      `${contacts}Authorization: Bearer ${apiKey}\r\nContent-Length: 50\r\n\r\n{"phone_number":`,
      true
    )
    const replies = allReplies(raw)
    expect(replies).toHaveLength(1)
    expectErrorReply(replies[0]!, 400, "bad_request")
  })

  it("a broken chunk while its handler waits for the body: one answer, 400 bad_request", async () => {
    const raw = await exchange(
      port,
      `${contacts}Authorization: Bearer ${apiKey}\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX`
    )
    const replies = allReplies(raw)
    expect(replies).toHaveLength(1)
    expectErrorReply(replies[0]!, 400, "bad_request")
  })

  it("a request the database must answer, the client half-closing once it is sent (nc -N): answered, then closed", async () => {
    const raw = await exchange(
      port,
      `GET /api/sms/v2/balance/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`,
      true
    )
    const replies = allReplies(raw)
    expect(replies.map((r) => [r.status, r.body?.total])).toEqual([[200, 5]])
  })

  it("a good request then garbage, half-closed: both answered, in order", async () => {
    const raw = await exchange(
      port,
      `GET /api/sms/v2/balance/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n\r\nGARBAGE\r\n\r\n`,
      true
    )
    const replies = allReplies(raw)
    expect(replies.map((r) => r.status)).toEqual([200, 400])
    expectErrorReply(replies[1]!, 400, "bad_request")
  })

  it("a chunked body far over 64 KiB: 413 saying Connection: close, and the connection closes (it announced keep-alive, then closed)", async () => {
    const body = `{"phone_number":"+261340000001","address":"${"x".repeat(420_000)}"}`
    const half = body.length >> 1
    const chunks = `${half.toString(16)}\r\n${body.slice(0, half)}\r\n${(body.length - half).toString(16)}\r\n${body.slice(half)}\r\n0\r\n\r\n`
    const replies = allReplies(
      await exchange(port, `${contacts}Authorization: Bearer ${apiKey}\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`)
    )
    expect(replies).toHaveLength(1)
    expectErrorReply(replies[0]!, 413, "payload_too_large")
    expect(replies[0]!.headers.connection).toBe("close")
  })

  it("a HEAD request the parser refuses: the refusal's headers, no body (RFC 9110 9.3.2)", async () => {
    const raw = await exchange(port, "HEAD /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
    expect(raw).toMatch(/^HTTP\/1\.1 400 /)
    expect(raw).toMatch(/\r\ncontent-type: application\/json\r\n/)
    expect(raw).toMatch(/\r\ncontent-length: [1-9]\d*\r\n/)
    expect(raw.indexOf("\r\n\r\n")).toBe(raw.length - 4)
  })
})

describe("a request too slow to arrive", () => {
  let slow: Server
  let slowPort: number
  beforeAll(async () => {
    slow = answerNodeRefusals(
      createServer({ headersTimeout: 300, requestTimeout: 300, connectionsCheckingInterval: 100 }, (_req, res) =>
        res.end()
      ),
      routes,
      { write: undefined }
    )
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve))
    slowPort = (slow.address() as { port: number }).port
  })
  afterAll(() => new Promise<void>((resolve) => slow.close(() => resolve())))

  it("408 request_timeout with the error body", async () => {
    expectErrorReply(
      parseReply(await exchange(slowPort, "GET /health HTTP/1.1\r\nHost: x\r\n")),
      408,
      "request_timeout"
    )
  })
})

describe("a request that arrives while the service is starting", () => {
  let early: Server
  let earlyPort: number
  beforeAll(async () => {
    early = answerWhileStarting(createServer(), { write: undefined })
    await new Promise<void>((resolve) => early.listen(0, "127.0.0.1", resolve))
    earlyPort = (early.address() as { port: number }).port
  })
  afterAll(() => new Promise<void>((resolve) => early.close(() => resolve())))

  it("gets 503 service_unavailable with Retry-After until the application's handler is attached, then the application answers", async () => {
    const before = parseReply(await exchange(earlyPort, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    expect(before.status).toBe(503)
    expect(before.body).toEqual({ error: { code: "service_unavailable", message: expect.any(String) } })
    expect(before.headers["retry-after"]).toBe("2")
    expect(before.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
    expect(before.headers["x-content-type-options"]).toBe("nosniff")
    early.on("request", (_req, res) => res.end("served"))
    const after = await exchange(earlyPort, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    expect(after).toMatch(/^HTTP\/1\.1 200/)
    expect(after.endsWith("served")).toBe(true)
  })
})
