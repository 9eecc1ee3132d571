/**
 * A local webhook receiver for the tests: records every request (headers, body) and answers
 * with the status the test sets; and the paths and helpers of the webhook routes.
 */
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Permission } from "../../src/domain/Permissions.ts"
import { allPermissions, App } from "../support/TestApp.ts"

export const webhooksPath = "/api/sms/v2/webhooks/"
export const webhookPath = (id: string) => `${webhooksPath}${id}/`

export interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** When it arrived, by the receiver's `clock` (ms). */
  readonly at: number
}

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** The status the next requests are answered with. */
  status: number
  /** What `at` of each request reads (ms): the real time unless a test sets the service's clock. */
  clock: () => number
  readonly close: () => Promise<void>
}

/** A receiver listening on 127.0.0.1 at a free port. */
export const startReceiver = async (status = 204): Promise<Receiver> => {
  const received: Array<Received> = []
  const state = { status, clock: () => Date.now() }
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: state.clock() })
      res.statusCode = state.status
      res.end(state.status >= 400 ? `refused with ${state.status}` : "")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    get status() {
      return state.status
    },
    set status(s: number) {
      state.status = s
    },
    get clock() {
      return state.clock
    },
    set clock(c: () => number) {
      state.clock = c
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export const withWebhooks: ReadonlyArray<Permission> = [...allPermissions, "webhooks.manage"]

let keys = 0
/** A fresh Idempotency-Key. */
export const newKey = () => `wh-key-${process.pid}-${++keys}`

/** Creates an endpoint of the suite's app and returns its answer's body (with the secret). */
export const createEndpoint = (apiKey: string, body: Record<string, unknown>) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).call("POST", webhooksPath, {
      token: apiKey,
      headers: { "idempotency-key": newKey() },
      body
    })
    if (res.status !== 201) return yield* Effect.die(new Error(`cannot create endpoint: ${res.status} ${res.text}`))
    return res.body as { id: string; secret: string; url: string; events: Array<string>; enabled: boolean }
  })
