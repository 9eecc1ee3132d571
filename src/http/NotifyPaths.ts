/**
 * The paths OneAPI providers POST their notifications to (docs/operators.md#oneapi-routes), and
 * the form they take in logs: their secret segment is never written.
 */

export const receiptsPath = "/providers/:entry/receipts/:secret"
export const inboundPath = "/providers/:entry/inbound/:secret"

export const notifyPaths: ReadonlyArray<readonly [method: string, path: string]> = [
  ["POST", receiptsPath],
  ["POST", inboundPath]
]

/** `path` as logs may show it: a notify path's secret replaced by `***`. */
export const loggablePath = (path: string): string =>
  path.startsWith("/providers/") ? path.replace(/^(\/providers\/[^/]*\/[^/]*\/)[^/]*/u, "$1***") : path
