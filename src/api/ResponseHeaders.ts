/**
 * The response headers of the public API, written into its OpenAPI document: the edge and the
 * handlers set them on the wire (http/Edge.ts, http/Answers.ts), the document says where a
 * client finds them. Applied to the whole document as its final transform.
 */

interface HeaderObject {
  readonly description: string
  readonly required?: boolean
  readonly schema: Record<string, unknown>
}

type Responses = Record<string, { headers?: Record<string, HeaderObject> }>
type Operation = {
  readonly parameters?: ReadonlyArray<{ readonly in: string; readonly name: string }>
  readonly responses?: Responses
}

const requestId: HeaderObject = {
  description:
    "Correlation id of this request: the client's own X-Request-Id when it sent one of 1 to 64 visible ASCII characters, else one the service made. Quote it when reporting a problem.",
  required: true,
  schema: { type: "string" }
}
const noSniff: HeaderObject = {
  description: "Always `nosniff`: a browser must take the answer for the Content-Type it declares.",
  required: true,
  schema: { type: "string", enum: ["nosniff"] }
}
const retryAfter: HeaderObject = {
  description:
    "Seconds to wait before retrying; sent with service_unavailable (the database cannot be reached, or the service is starting).",
  schema: { type: "integer", minimum: 0 }
}
const allow: HeaderObject = {
  description: "The methods the path accepts.",
  required: true,
  schema: { type: "string" }
}
const replayed: HeaderObject = {
  description:
    "`true` when this is the stored answer of an earlier identical request with the same Idempotency-Key: nothing was sent again.",
  schema: { type: "string", enum: ["true"] }
}
const location: HeaderObject = {
  description: "Relative URL of the created resource.",
  required: true,
  schema: { type: "string" }
}

/** Statuses a creation stores and replays under its Idempotency-Key. */
const replayableStatuses = new Set(["201", "202", "403", "502", "503"])

const isCreation = (op: Operation) =>
  (op.parameters ?? []).some((p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key")

/**
 * Adds X-Request-Id and X-Content-Type-Options to every response, Retry-After to 503, Allow to
 * 405, Location and Idempotent-Replayed to creations. (The answers of the public API that hold a
 * secret, a webhook endpoint's creation and a rotated secret, also carry `Cache-Control: no-store`.)
 */
export const withResponseHeaders = (spec: Record<string, unknown>): Record<string, unknown> => {
  for (const item of Object.values(spec.paths ?? {}) as Array<Record<string, Operation>>) {
    for (const op of Object.values(item)) {
      const creation = isCreation(op)
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const headers: Record<string, HeaderObject> = {
          ...response.headers,
          "x-request-id": requestId,
          "x-content-type-options": noSniff
        }
        if (status === "503") headers["retry-after"] = retryAfter
        if (status === "405") headers.allow = allow
        if (headers.location !== undefined) headers.location = location
        if (creation && replayableStatuses.has(status)) headers["idempotent-replayed"] = replayed
        response.headers = headers
      }
    }
  }
  return spec
}
