/**
 * The paths OneAPI providers POST their notifications to (docs/operators.md#oneapi-routes), and
 * the form they take in logs: their secret segment is never written, in logs or traces.
 */
import { Layer } from "effect"
import { HttpMiddleware } from "effect/http"

export const receiptsPath = "/providers/:entry/receipts/:secret"
export const inboundPath = "/providers/:entry/inbound/:secret"

export const notifyPaths: ReadonlyArray<readonly [method: string, path: string]> = [
  ["POST", receiptsPath],
  ["POST", inboundPath]
]

/** `path` as logs may show it: a notify path's secret replaced by `***`. */
export const loggablePath = (path: string): string =>
  path.startsWith("/providers/") ? path.replace(/^(\/providers\/[^/]*\/[^/]*\/)[^/]*/u, "$1***") : path

/**
 * No server span for a notify request: a span records the request's URL, secret and all, and
 * the exporter sends it out of the service.
 */
export const notifyUntracedLayer = Layer.succeed(HttpMiddleware.TracerDisabledWhen)((request) =>
  request.url.startsWith("/providers/")
)
