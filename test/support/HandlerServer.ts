/**
 * An in-process app's fetch-style handler (TestApp.ts `App.handler`) served on a free port of
 * 127.0.0.1, for a provider that calls the service back over HTTP: the OneAPI simulator POSTs
 * receipts and inbound messages to the notify URLs under the service's public URL
 * (docs/operators.md#oneapi-routes). It listens before the app is built (its URL is the app's
 * `publicUrl`); until `handler` is set it answers 503, which a provider tells again.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"

const bodyOf = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (text += chunk))
    req.on("end", () => resolve(text))
    req.on("error", reject)
  })

export class HandlerServer {
  /** Where requests go; none yet: 503. */
  handler: ((request: Request) => Promise<Response>) | undefined
  private readonly server: Server

  private constructor(server: Server) {
    this.server = server
  }

  static async start(): Promise<HandlerServer> {
    const server = createServer()
    const served = new HandlerServer(server)
    server.on("request", async (req, res) => {
      try {
        const text = await bodyOf(req)
        const handler = served.handler
        if (handler === undefined) return void res.writeHead(503, { "retry-after": "1" }).end()
        const headers = new Headers()
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value)
        const method = req.method ?? "GET"
        const answer = await handler(
          new Request(`${served.url}${req.url ?? "/"}`, {
            method,
            headers,
            ...(method === "GET" || method === "HEAD" ? {} : { body: text })
          })
        )
        res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()))
      } catch {
        if (!res.headersSent) res.writeHead(500)
        res.end()
      }
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return served
  }

  /** `http://127.0.0.1:<port>`: the app's public URL. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }
}
