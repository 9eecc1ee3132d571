/**
 * A OneAPI provider on a free port (node:http), scripted per test: its token endpoint
 * (`/oauth/token`, tokens `tok-1`, `tok-2`... valid `expiresIn` seconds, or refused) and its send
 * endpoint, whose answer to each request a test chooses (`onSend`): a status and body, the socket
 * destroyed once the request is read, or no answer at all. Every request is kept.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, beforeEach } from "@effect/vitest"
import { Redacted } from "effect"
import type { OneApiRouteSettings } from "../../../src/config/OneApiSettings.ts"

export interface FakeRequest {
  /** When it arrived (ms). */
  readonly at: number
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly text: string
  /** The bearer token it carried. */
  readonly token: string | undefined
  // biome-ignore lint/suspicious/noExplicitAny: test convenience: request bodies are asserted field by field
  readonly json: any
}

export type FakeReply =
  | { readonly status: number; readonly body?: unknown; readonly headers?: Record<string, string> }
  /** The socket destroyed once the request was read: nothing answered. */
  | "destroy"
  /** No answer until the fake closes. */
  | "hold"

export const senderAddress = "tel:+2610000"
const requestsPath = `/smsmessaging/v1/outbound/${encodeURIComponent(senderAddress)}/requests`

/** A 201 for request `n`, as Orange answers it. */
export const created = (n: number): FakeReply => ({
  status: 201,
  body: { resourceReference: { resourceURL: `http://fake${requestsPath}/req-${n}` } }
})

/** A `requestError` of `kind` (serviceException or policyException). */
export const requestError = (
  status: number,
  kind: "serviceException" | "policyException",
  messageId: string,
  text: string
): FakeReply => ({ status, body: { requestError: { [kind]: { messageId, text } } } })

export class FakeOneApi {
  readonly sends: Array<FakeRequest> = []
  readonly tokenRequests: Array<FakeRequest> = []
  /** The answer to the n-th send (from 1). */
  onSend: (request: FakeRequest, n: number) => FakeReply = (_r, n) => created(n)
  /** Seconds each token is valid; null refuses tokens with 401. */
  expiresIn: number | null = 3600
  /** How long the token endpoint takes to answer. */
  tokenDelayMs = 0
  /** Tokens the send endpoint answers 401 for. */
  readonly revoked = new Set<string>()
  private readonly server: Server
  private readonly held: Array<ServerResponse> = []
  private tokens = 0

  private constructor(server: Server) {
    this.server = server
  }

  static async start(): Promise<FakeOneApi> {
    const server = createServer()
    const fake = new FakeOneApi(server)
    server.on("request", (req, res) => void fake.handle(req, res))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return fake
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  /** A route's settings against this fake. */
  settings(overrides: Partial<OneApiRouteSettings> = {}): OneApiRouteSettings {
    return {
      name: "orange",
      baseUrl: this.baseUrl,
      tokenUrl: `${this.baseUrl}/oauth/token`,
      clientId: "client",
      clientSecret: Redacted.make("client-secret"),
      senderAddress,
      prefixes: ["+26132"],
      mps: 0,
      verifyByCorrelator: false,
      fallback: undefined,
      ...overrides
    }
  }

  /** Forgets what it saw and answers as at its start. */
  reset(): void {
    this.sends.length = 0
    this.tokenRequests.length = 0
    this.onSend = (_r, n) => created(n)
    this.expiresIn = 3600
    this.revoked.clear()
    this.tokens = 0
    this.tokenDelayMs = 0
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    const auth = req.headers.authorization ?? ""
    const request: FakeRequest = {
      at: Date.now(),
      path: req.url ?? "",
      headers: req.headers,
      text,
      token: auth.startsWith("Bearer ") ? auth.slice(7) : undefined,
      json
    }
    if (req.url === "/oauth/token") {
      this.tokenRequests.push(request)
      if (this.tokenDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.tokenDelayMs))
      if (this.expiresIn === null) return this.reply(res, { status: 401, body: { error: "invalid_client" } })
      return this.reply(res, {
        status: 200,
        body: { token_type: "Bearer", access_token: `tok-${++this.tokens}`, expires_in: this.expiresIn }
      })
    }
    if (req.url !== requestsPath) return this.reply(res, { status: 404, body: {} })
    this.sends.push(request)
    if (request.token !== undefined && this.revoked.has(request.token))
      return this.reply(res, { status: 401, body: { code: 42, message: "Expired credentials" } })
    return this.reply(res, this.onSend(request, this.sends.length))
  }

  private reply(res: ServerResponse, reply: FakeReply): void {
    if (reply === "destroy") {
      res.socket?.destroy()
      return
    }
    if (reply === "hold") {
      this.held.push(res)
      return
    }
    const body =
      reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body)
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
    res.end(body)
  }

  async close(): Promise<void> {
    for (const res of this.held) res.socket?.destroy()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** A port nothing listens on: connections to it are refused. */
export const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** A fake started before the file's first test, reset before each and closed after the last: the function answers it. */
export const fakeOneApiPerFile = (): (() => FakeOneApi) => {
  let fake: FakeOneApi | undefined
  beforeAll(async () => {
    fake = await FakeOneApi.start()
  })
  beforeEach(() => fake?.reset())
  afterAll(async () => {
    await fake?.close()
  })
  return () => fake!
}
