/**
 * A webhook receiver as an integrator runs one, for the fault suite and the bench: an HTTP
 * server on 127.0.0.1 that verifies every event's Standard Webhooks signature with npm
 * `standardwebhooks` (the independent verifier) and records each event id it accepted, when,
 * and how many times. It can be put in a fault at any moment:
 *
 * - `up`: answers 204 (after `delayMs`, when set) to a request whose signature verifies, 400 otherwise;
 * - `refuse`: not listening at all (connections refused); `up` again listens on the same port;
 * - `close`: accepts the connection and closes it without an answer;
 * - `error`: answers 503;
 * - `hang`: accepts the request and never answers (the service must give up on its own).
 *
 * Only a 2xx answer counts as a delivery: an event is recorded as received when it was answered
 * 204. Requests in the other modes are only counted (`attemptsSeen`).
 *
 * Every event is checked by `Webhook.verify`, which also refuses a timestamp more than 5 minutes
 * from the receiver's clock: `webhook-timestamp` is the attempt's real time, under the service's
 * test clock too.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Webhook } from "standardwebhooks"

export type ReceiverMode = "up" | "refuse" | "close" | "error" | "hang"

/** One event as the receiver first accepted it. */
export interface ReceivedEvent {
  readonly id: string
  readonly type: string
  /** The event's `timestamp`: when the status changed (epoch ms). */
  readonly occurredAt: number
  /** When this receiver first answered it 204 (epoch ms). */
  readonly receivedAt: number
  /** How many times it was answered 204 (more than once: delivered again after a fault). */
  deliveries: number
  // biome-ignore lint/suspicious/noExplicitAny: the event's data, read field by field
  readonly data: any
}

export interface WebhookReceiver {
  readonly url: string
  /** Events accepted, by event id (`evt_...`). */
  readonly events: Map<string, ReceivedEvent>
  /** Requests refused for a bad signature or body, with why. */
  readonly rejected: Array<string>
  /** Requests that reached the receiver in each mode (a refused connection never does). */
  readonly attemptsSeen: Record<ReceiverMode, number>
  /** Requests the receiver holds without an answer right now (`hang`, or `up` with a delay). */
  readonly open: () => number
  readonly mode: ReceiverMode
  /** Switches the mode; `refuse` stops listening (open connections closed), leaving it listens again. */
  readonly setMode: (mode: ReceiverMode) => Promise<void>
  /** The endpoint's secret, once created (requests before it are refused as unverifiable). */
  secret: string | undefined
  /** Delay before answering in `up`. */
  delayMs: number
  readonly close: () => Promise<void>
}

const listen = (server: Server, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.removeListener("error", reject)
      resolve()
    })
  })

const stopListening = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })

/** Starts a receiver on a free port of 127.0.0.1, in `mode` (`up` unless given). */
export const startWebhookReceiver = async (
  options: { readonly mode?: ReceiverMode; readonly delayMs?: number; readonly path?: string } = {}
): Promise<WebhookReceiver> => {
  const events = new Map<string, ReceivedEvent>()
  const rejected: Array<string> = []
  const attemptsSeen: Record<ReceiverMode, number> = { up: 0, refuse: 0, close: 0, error: 0, hang: 0 }
  const sockets = new Set<Socket>()
  let openRequests = 0

  const check = (secret: string, body: string, headers: Record<string, string>): void => {
    new Webhook(secret).verify(body, headers)
  }

  const accept = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")])
    )
    const id = headers["webhook-id"] ?? ""
    try {
      if (receiver.secret === undefined) throw new Error("no secret yet")
      check(receiver.secret, body, headers)
      const event = JSON.parse(body) as { type: string; timestamp: string; data: unknown }
      const known = events.get(id)
      if (known === undefined) {
        events.set(id, {
          id,
          type: event.type,
          occurredAt: Date.parse(event.timestamp),
          receivedAt: Date.now(),
          deliveries: 1,
          data: event.data
        })
      } else known.deliveries++
      res.statusCode = 204
      res.end()
    } catch (e) {
      rejected.push(`${id}: ${String(e)}`)
      res.statusCode = 400
      res.end("signature or body refused")
    }
  }

  const server = createServer((req, res) => {
    const mode = receiver.mode
    attemptsSeen[mode]++
    if (mode === "close") {
      req.socket.destroy()
      return
    }
    openRequests++
    res.on("close", () => void openRequests--)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (mode === "hang") return
      if (mode === "error") {
        res.statusCode = 503
        res.end("receiver failing on purpose")
        return
      }
      const body = Buffer.concat(chunks).toString("utf8")
      if (receiver.delayMs > 0) setTimeout(() => accept(req, res, body), receiver.delayMs)
      else accept(req, res, body)
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await listen(server, 0)
  const { port } = server.address() as AddressInfo
  const state = { mode: "up" as ReceiverMode }

  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}${options.path ?? "/hooks"}`,
    events,
    rejected,
    attemptsSeen,
    open: () => openRequests,
    get mode() {
      return state.mode
    },
    setMode: async (mode) => {
      const wasListening = state.mode !== "refuse"
      state.mode = mode
      if (mode === "refuse" && wasListening) await stopListening(server)
      if (mode !== "refuse" && !wasListening) await listen(server, port)
    },
    secret: undefined,
    delayMs: options.delayMs ?? 0,
    close: async () => {
      for (const s of sockets) s.destroy()
      if (state.mode !== "refuse") await stopListening(server)
      state.mode = "refuse"
    }
  }
  await receiver.setMode(options.mode ?? "up")
  return receiver
}
