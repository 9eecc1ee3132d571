/**
 * The Node HTTP server the service listens with. Node answers some requests itself, before any
 * route sees them: what its parser refuses (a bad request line, an invalid header, headers too
 * large, a request too slow to arrive), CONNECT (the connection used to close with no answer)
 * and an Expect other than 100-continue. Here each of them gets the spec's error body too, and
 * so does a request that arrives while the service is still starting (503). A request whose body
 * breaks after it was routed gets one answer, never two; a client that half-closes once its
 * request is sent gets its answer.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, References } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, METHODS, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { errorBody } from "../domain/Errors.ts"
import { AccessLogWriter, logTimeMillis } from "../observability/Logging.ts"
import { accessLine, accessLogEnabled } from "./AccessLog.ts"
import { acceptableRequestId, everyAnswerHeaders, maxBodyBytes, requestIdHeader, retryAfterSeconds } from "./Edge.ts"
import type { RouteTable } from "./RouteTable.ts"

/** How long a refused connection may stay half-open for the answer to drain before it is destroyed. */
const refusedLingerMs = 2000

interface Refusal {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly headers?: Readonly<Record<string, string>>
}

/** The raw HTTP/1.1 bytes of a refusal, without its body if it answers a HEAD; the connection is closed after it. */
const refusalBytes = (refusal: Refusal, requestId: string, head: boolean): string => {
  const body = JSON.stringify(errorBody(refusal.code, refusal.message))
  const headers = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    connection: "close",
    ...everyAnswerHeaders,
    [requestIdHeader]: requestId,
    ...refusal.headers
  }
  const lines = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")
  return `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ""}\r\n${lines}\r\n${head ? "" : body}`
}

/** What a request to `path` with a method nobody routes gets: 405 with Allow on a known path, else 404 (as the edge answers). */
const unroutedMethod = (routes: RouteTable, method: string, path: string): Refusal => {
  const allowed = routes.allowedMethods(path)
  return allowed.length === 0 && method !== "CONNECT"
    ? { status: 404, code: "not_found", message: "No such route" }
    : {
        status: 405,
        code: "method_not_allowed",
        message:
          allowed.length === 0
            ? `${method} is not allowed`
            : `${method} is not allowed here; use ${allowed.join(", ")}`,
        // an empty Allow says that no method is allowed on that target
        headers: { allow: allowed.join(", ") }
      }
}

// The request line of a method Node's parser does not know: a token, an origin-form path, a version.
const requestLine = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[^ ?]*)(?:\?[^ ]*)? HTTP\/\d\.\d\r?\n/

interface ParserError extends Error {
  readonly code?: string
  /** The chunk being parsed: with pipelining, earlier requests of the connection too. */
  readonly rawPacket?: Buffer
  /** Where in `rawPacket` the parser stopped. */
  readonly bytesParsed?: number
}

/** The request line of the request the parser stopped in: the text after the last header block ending before that point. */
const failingRequestLine = (error: ParserError): RegExpExecArray | null => {
  const packet = error.rawPacket?.toString("latin1") ?? ""
  const stop = Math.min(error.bytesParsed ?? 0, packet.length)
  const boundary = packet.lastIndexOf("\r\n\r\n", stop - 1)
  return requestLine.exec(packet.slice(boundary === -1 ? 0 : boundary + 4))
}

/** The answer to a request Node's parser refused with `error`, whose request line is `line`. */
const parserRefusal = (routes: RouteTable, error: ParserError, line: RegExpExecArray | null): Refusal => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, code: "headers_too_large", message: "The request headers are too large" }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, code: "payload_too_large", message: `Request body exceeds ${maxBodyBytes} bytes` }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, code: "request_timeout", message: "The request did not arrive in time" }
    case "HPE_INVALID_METHOD":
      // a method Node knows did not fail as a method: that request broke elsewhere
      if (line !== null && !METHODS.includes(line[1]!)) return unroutedMethod(routes, line[1]!, line[2]!)
  }
  return { status: 400, code: "bad_request", message: "The request is not valid HTTP/1.1 (request line or headers)" }
}

// Outside any fiber (Node answers before the application sees the request): ids come straight from crypto.
const requestIdOf = (request: IncomingMessage): string => {
  const sent = request.headers[requestIdHeader]
  return acceptableRequestId(typeof sent === "string" ? sent : undefined) ?? randomUUID()
}

const pathOf = (request: IncomingMessage): string => (request.url ?? "").split("?")[0]!

interface RefusalLog {
  readonly write: ((line: string) => void) | undefined
}

/** Connections being closed after a refusal: later parser errors on them change nothing. */
const closing = new WeakSet<Duplex>()

/** Closes `socket` once what was written drains (or after refusedLingerMs). */
const close = (socket: Duplex, bytes?: string) => {
  closing.add(socket)
  socket.end(bytes)
  setTimeout(() => socket.destroy(), refusedLingerMs).unref()
}

const answer = (socket: Duplex, refusal: Refusal, method: string, path: string, requestId: string, log: RefusalLog) => {
  close(socket, refusalBytes(refusal, requestId, method === "HEAD"))
  log.write?.(accessLine({ method, path, status: refusal.status, ms: 0, requestId }, logTimeMillis()))
}

/**
 * Makes `server` answer what Node would answer itself with the spec's error body; returns it.
 * Apply it before answerWhileStarting (it listens to 'request' events too).
 */
export const answerNodeRefusals = (server: Server, routes: RouteTable, log: RefusalLog): Server => {
  // the last request routed on each connection: the parser may fail in its body, after the routing
  const routed = new WeakMap<Duplex, IncomingMessage>()
  server.on("request", (request: IncomingMessage) => void routed.set(request.socket, request))
  server.on("clientError", (error: ParserError, socket: Duplex) => {
    if (closing.has(socket)) return
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    const line = failingRequestLine(error)
    const refusal = parserRefusal(routes, error, line)
    const current = (socket as Duplex & { readonly _httpMessage?: ServerResponse | null })._httpMessage
    const inFlight = current !== undefined && current !== null && !current.writableFinished ? current : undefined
    const request = routed.get(socket)
    if (request !== undefined && !request.complete) {
      // Its body is broken (bad chunking, cut short): that request gets one answer, the refusal
      // unless its own answer has begun; its handler, which waits for the rest, ends with the connection.
      if (inFlight === undefined) close(socket)
      else if (inFlight.headersSent) inFlight.once("finish", () => close(socket))
      else answer(socket, refusal, request.method ?? "-", pathOf(request), requestIdOf(request), log)
      return
    }
    const refuse = () => answer(socket, refusal, line?.[1] ?? "-", line?.[2] ?? "-", randomUUID(), log)
    // A pipelined request still being answered on this connection goes first, whole; the refusal
    // is written before Node's own 'finish' handler runs, which would close the connection of a
    // client that half-closed it.
    if (inFlight !== undefined) inFlight.prependOnceListener("finish", refuse)
    else refuse()
  })
  server.on("connect", (request: IncomingMessage, socket: Duplex) => {
    const path = pathOf(request)
    answer(socket, unroutedMethod(routes, "CONNECT", path), "CONNECT", path, requestIdOf(request), log)
  })
  // An Expect other than 100-continue would get Node's plain 417; the service has no
  // expectation to meet, so it answers the request as if the header were absent (RFC 9110 allows it).
  server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    server.emit("request", request, response)
  })
  return server
}

/**
 * Answers 503 service_unavailable with Retry-After until the application attaches its own
 * request handler: the service listens before it opens its database, so that a busy port is
 * found before anything is written, and a request arriving meanwhile is not left hanging.
 */
export const answerWhileStarting = (server: Server, log: RefusalLog): Server => {
  const starting = (request: IncomingMessage, response: ServerResponse) => {
    const requestId = requestIdOf(request)
    const body = JSON.stringify(errorBody("service_unavailable", "The service is starting; retry shortly"))
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "retry-after": String(retryAfterSeconds),
      ...everyAnswerHeaders,
      [requestIdHeader]: requestId
    })
    response.end(body)
    log.write?.(
      accessLine(
        { method: request.method ?? "-", path: pathOf(request), status: 503, ms: 0, requestId },
        logTimeMillis()
      )
    )
  }
  // 'newListener' fires before a listener is added: the application's handler replaces this one
  const replaceStarting = (event: string | symbol) => {
    if (event !== "request") return
    server.off("request", starting)
    server.off("newListener", replaceStarting)
  }
  server.on("request", starting)
  server.on("newListener", replaceStarting)
  return server
}

/**
 * Lets a client that half-closes its connection once its request is sent (`shutdown(SHUT_WR)`,
 * `nc -N`) read its answer: by default Node takes the client's FIN for an abort of the requests
 * in flight and closes the connection unanswered. `httpAllowHalfOpen` is Node's own switch
 * (undocumented, set by Node's tests): the connection then closes after the last answer.
 */
export const answerHalfClosedClients = (server: Server): Server => {
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  return server
}

/**
 * The listening server on `options`, its refusals answered as JSON and access-logged. HTTP/1.1
 * requests without a Host header are served rather than refused by Node with an empty 400: the
 * service answers nothing that depends on the host.
 */
export const nodeServerLayer = (routes: RouteTable, options: { readonly port: number; readonly host: string }) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const write = accessLogEnabled(yield* References.MinimumLogLevel) ? yield* AccessLogWriter : undefined
      const log: RefusalLog = { write }
      return NodeHttpServer.layer(
        () =>
          answerWhileStarting(
            answerNodeRefusals(answerHalfClosedClients(createServer({ requireHostHeader: false })), routes, log),
            log
          ),
        options
      )
    })
  )
