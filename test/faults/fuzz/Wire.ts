/**
 * Requests over real sockets. `send`: through Node's HTTP client on kept-alive connections (what
 * any client can send). `exchange`: raw bytes on a connection of their own, for what no client
 * sends (bad request lines, lying lengths, broken chunking), read until the server closes it and
 * split into the responses it holds.
 */
import { Agent, request as httpRequest } from "node:http"
import { connect } from "node:net"
import type { FuzzRequest } from "./Requests.ts"

export interface Answer {
  readonly status: number
  /** Lower-case names; a repeated header's values joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

/** What came back for a request: an answer, or what happened instead. */
export type Outcome =
  | { readonly _tag: "Answer"; readonly answer: Answer }
  | { readonly _tag: "NoAnswer"; readonly reason: string }

const answerTimeoutMs = 60_000

/** A client for the service at `port`, at most `sockets` requests in flight. */
export const makeClient = (port: number, sockets: number) => {
  // with a timeout of its own, the agent honours the server's Keep-Alive hint (timeout=5) and drops
  // an idle connection a second before the server would: never a request written on a closing one
  const agent = new Agent({ keepAlive: true, maxSockets: sockets, timeout: answerTimeoutMs })
  // the request each connection carried last: what came before a connection the server closed
  const lastOn = new WeakMap<object, FuzzRequest>()
  const send = (r: FuzzRequest) =>
    new Promise<Outcome>((resolve) => {
      let before: FuzzRequest | undefined
      const body =
        r.body === undefined
          ? undefined
          : typeof r.body === "string"
            ? Buffer.from(r.body, "utf8")
            : Buffer.from(r.body)
      const framing =
        body === undefined
          ? {}
          : r.chunked
            ? { "transfer-encoding": "chunked" }
            : { "content-length": String(body.length) }
      const headers = { ...r.headers, ...framing }
      let done = false
      const finish = (outcome: Outcome) => {
        if (!done) resolve(outcome)
        done = true
      }
      let request: ReturnType<typeof httpRequest>
      try {
        request = httpRequest(
          { host: "127.0.0.1", port, agent, method: r.method, path: r.path, headers, timeout: answerTimeoutMs },
          (response) => {
            const chunks: Array<Buffer> = []
            response.on("data", (c: Buffer) => chunks.push(c))
            response.on("end", () => {
              const joined: Record<string, string> = {}
              for (const [name, value] of Object.entries(response.headers)) {
                if (value !== undefined) joined[name] = Array.isArray(value) ? value.join(", ") : value
              }
              finish({
                _tag: "Answer",
                answer: { status: response.statusCode ?? 0, headers: joined, body: Buffer.concat(chunks) }
              })
            })
            response.on("error", (e) => finish({ _tag: "NoAnswer", reason: `response: ${e.message}` }))
          }
        )
      } catch (e) {
        // Node's client refuses to write it (an invalid character in a header): a generator bug, not the service's
        throw new Error(`the client cannot send ${r.method} ${r.path}: ${String(e)}`)
      }
      request.on("timeout", () => {
        finish({ _tag: "NoAnswer", reason: `no answer within ${answerTimeoutMs} ms` })
        request.destroy()
      })
      request.on("socket", (socket) => {
        before = lastOn.get(socket)
        lastOn.set(socket, r)
      })
      request.on("error", (e) => {
        const after =
          before === undefined
            ? ""
            : ` after ${before.method} ${before.path.slice(0, 100)}${before.chunked ? " (chunked)" : ""} ${JSON.stringify(before.headers).slice(0, 200)} ${String(before.body ?? "").slice(0, 100)}`
        finish({
          _tag: "NoAnswer",
          reason: `request: ${e.message}${request.reusedSocket ? ` (on a kept-alive connection${after})` : ""}`
        })
      })
      if (body !== undefined && r.chunked) {
        // two chunks, split mid-body
        request.write(body.subarray(0, body.length >> 1))
        request.end(body.subarray(body.length >> 1))
      } else request.end(body)
    })
  return { send, close: () => agent.destroy() }
}

/** Writes `chunks` (each after the previous one is flushed) on a new connection, half-closes if asked, and reads until the server closes. */
export const exchange = (
  port: number,
  chunks: ReadonlyArray<string | Uint8Array>,
  options: { readonly halfClose?: boolean } = {}
) =>
  new Promise<{ readonly raw: Buffer; readonly closedBy: "server" | "timeout" }>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    const received: Array<Buffer> = []
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ raw: Buffer.concat(received), closedBy: "timeout" })
    }, 15_000)
    socket.on("connect", async () => {
      for (const chunk of chunks) await new Promise<void>((done) => socket.write(chunk, () => done()))
      if (options.halfClose === true) socket.end()
    })
    socket.on("data", (c: Buffer) => received.push(c))
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ raw: Buffer.concat(received), closedBy: "server" })
    })
    socket.on("error", () => {})
  })

/** Splits raw response bytes into answers; `methods[i]` is the method of the i-th request (a HEAD answer has no body). */
export const splitAnswers = (
  raw: Buffer,
  methods: ReadonlyArray<string>
): { readonly answers: ReadonlyArray<Answer>; readonly rest: Buffer } => {
  const answers: Array<Answer> = []
  let at = 0
  while (at < raw.length) {
    const end = raw.indexOf("\r\n\r\n", at, "latin1")
    if (end === -1) break
    const [statusLine, ...lines] = raw.subarray(at, end).toString("latin1").split("\r\n")
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? Number.NaN)
    if (Number.isNaN(status)) break
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(":")
      const name = line.slice(0, colon).trim().toLowerCase()
      headers[name] =
        headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`
    }
    let bodyStart = end + 4
    // an interim answer (100 Continue) precedes the real one
    if (status >= 100 && status < 200) {
      at = bodyStart
      continue
    }
    const head = methods[answers.length] === "HEAD"
    let body: Buffer = Buffer.alloc(0)
    if (!head && headers["transfer-encoding"]?.toLowerCase() === "chunked") {
      const parts: Array<Buffer> = []
      for (;;) {
        const lineEnd = raw.indexOf("\r\n", bodyStart, "latin1")
        if (lineEnd === -1) break
        const size = parseInt(raw.subarray(bodyStart, lineEnd).toString("latin1"), 16)
        if (Number.isNaN(size)) break
        parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size))
        bodyStart = lineEnd + 2 + size + 2
        if (size === 0) break
      }
      body = Buffer.concat(parts)
    } else if (!head) {
      const length = Number(headers["content-length"] ?? "0")
      body = raw.subarray(bodyStart, bodyStart + length)
      bodyStart += length
    }
    answers.push({ status, headers, body })
    at = bodyStart
  }
  return { answers, rest: raw.subarray(at) }
}
