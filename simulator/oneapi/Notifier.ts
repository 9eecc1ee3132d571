/**
 * The OneAPI simulator's notifications to the service (docs/operators.md#the-oneapi-simulator):
 * delivery receipts and inbound messages alike are POSTed as JSON and sent again until a 2xx comes
 * back: `retryMs` after the first try, then after a gap doubling up to 16 times that. Any other
 * answer (a 4xx included: the service may be mid-restart), or none within 10 s, is logged and
 * tried again.
 */
import { Agent as HttpAgent, type ClientRequest, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { Timeline } from "../smsc/Timeline.ts"
import { loggableUrl } from "./Notifications.ts"

/** How long one POST may take before it counts as unanswered. */
const attemptTimeoutMs = 10_000

export type Log = (event: string, fields: Readonly<Record<string, string | number>>) => void

export class Notifier {
  private readonly timeline: Timeline
  private readonly retryMs: number
  private readonly log: Log | undefined
  private readonly httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 64 })
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 64 })
  private readonly inFlight = new Set<ClientRequest>()
  private disposed = false

  constructor(timeline: Timeline, retryMs: number, log: Log | undefined) {
    this.timeline = timeline
    this.retryMs = retryMs
    this.log = log
  }

  /**
   * POSTs `body` to `url` now, and again until answered 2xx; `answered` is told the status of each
   * try (0 when none came), and `delivered` once, at the first 2xx.
   */
  post(url: string, body: unknown, answered: (status: number) => void, delivered: () => void = () => {}): void {
    const text = JSON.stringify(body)
    let attempts = 0
    const attempt = (): void => {
      if (this.disposed) return
      attempts++
      this.once(url, text, (status, error) => {
        answered(status)
        if (status >= 200 && status < 300) return delivered()
        this.log?.("notification not taken", {
          url: loggableUrl(url),
          status,
          attempt: attempts,
          ...(error === undefined ? {} : { error })
        })
        this.timeline.after(this.retryMs * 2 ** Math.min(attempts - 1, 4), attempt)
      })
    }
    attempt()
  }

  /** Stops every try in flight and every one to come. */
  dispose(): void {
    this.disposed = true
    for (const req of this.inFlight) req.destroy()
    this.httpAgent.destroy()
    this.httpsAgent.destroy()
  }

  private once(url: string, text: string, done: (status: number, error?: string) => void): void {
    let finished = false
    const finish = (status: number, error?: string): void => {
      if (finished) return
      finished = true
      this.inFlight.delete(req)
      if (!this.disposed) done(status, error)
    }
    const https = url.startsWith("https:")
    const req = (https ? httpsRequest : httpRequest)(url, {
      method: "POST",
      agent: https ? this.httpsAgent : this.httpAgent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) }
    })
    this.inFlight.add(req)
    req.setTimeout(attemptTimeoutMs, () => req.destroy(new Error(`no answer in ${attemptTimeoutMs} ms`)))
    req.on("response", (res) => {
      res.resume()
      res.on("end", () => finish(res.statusCode ?? 0))
      res.on("error", () => finish(res.statusCode ?? 0))
    })
    req.on("error", (e) => finish(0, e.message))
    req.end(text)
  }
}
