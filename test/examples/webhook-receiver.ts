import { createServer } from "node:http"
import { Webhook } from "standardwebhooks"

export interface StatusEvent {
  readonly type: string
  readonly timestamp: string
  readonly data: { readonly id: string; readonly status?: string }
}

/** A receiver of the service's status events: verifies each one with the endpoint's secret, once per event id. */
export const makeReceiver = (secret: string, onEvent: (event: StatusEvent) => void) => {
  const webhook = new Webhook(secret)
  const seen = new Set<string>()
  return createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      let event: StatusEvent
      try {
        // throws unless a signature matches and the timestamp is within 5 minutes
        event = webhook.verify(
          Buffer.concat(chunks).toString("utf8"),
          req.headers as Record<string, string>
        ) as StatusEvent
      } catch {
        res.writeHead(400).end()
        return
      }
      // delivered at least once: the same webhook-id may come again
      const id = String(req.headers["webhook-id"])
      if (!seen.has(id)) {
        seen.add(id)
        onEvent(event)
      }
      res.writeHead(204).end()
    })
  })
}
