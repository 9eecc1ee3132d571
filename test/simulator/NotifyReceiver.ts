/**
 * A tiny HTTP receiver for the OneAPI simulator's notifications: it listens on a free port of
 * 127.0.0.1, records every POST (path, parsed JSON body, when), and answers 200, or for the next
 * few POSTs whatever status a test asks (to see them sent again).
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface Posted {
  readonly path: string
  // biome-ignore lint/suspicious/noExplicitAny: a notification's body, read field by field
  readonly body: any
  /** When it arrived (performance.now()). */
  readonly at: number
  /** The status it was answered. */
  readonly status: number
}

export class NotifyReceiver {
  private readonly server: Server
  private readonly failures: Array<number> = []
  /** Every POST received, in order. */
  readonly posted: Array<Posted> = []

  private constructor(server: Server) {
    this.server = server
  }

  static async start(): Promise<NotifyReceiver> {
    const server = createServer()
    const receiver = new NotifyReceiver(server)
    server.on("request", (req, res) => {
      let text = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => (text += chunk))
      req.on("end", () => {
        const status = receiver.failures.shift() ?? 200
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          body = text
        }
        receiver.posted.push({ path: req.url ?? "", body, at: performance.now(), status })
        res.writeHead(status).end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return receiver
  }

  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`
  }

  /** Answers the next POSTs with these statuses, one each, in order. */
  failNext(...statuses: ReadonlyArray<number>): void {
    this.failures.push(...statuses)
  }

  /** The POSTs whose body satisfies `match`. */
  where(match: (body: Posted["body"]) => boolean): ReadonlyArray<Posted> {
    return this.posted.filter((p) => match(p.body))
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }
}
