/**
 * The HTTP edge: every answer the router or the platform would give outside a handler becomes
 * a JSON body of docs/integrators.md#errors — 404/405 for routes, 400 for a path id the router refused that no
 * field may hold (404 for one it refused only as too long), 406 for Accept, 413 for a body over the limit, 415 for a non-JSON body, 503 with Retry-After while
 * the database cannot be reached, 500 that reveals nothing (logged with its correlation id).
 * Every response carries `X-Request-Id` and `X-Content-Type-Options: nosniff`; every request gets
 * one access-log line (a provider's notify path without its secret: NotifyPaths.ts).
 */
import { ByteSize, Effect, References } from "effect"
import {
  HttpRouter,
  type HttpServerError,
  HttpServerRequest,
  HttpServerRespondable,
  HttpServerResponse
} from "effect/http"
import { isDatabaseOutage } from "../db/DatabaseUnavailable.ts"
import { errorBody, type ErrorDetail } from "../domain/Errors.ts"
import { Ids } from "../platform/Ids.ts"
import { AccessLogWriter, logTimeMillis } from "../observability/Logging.ts"
import { makeOutageLog } from "../observability/RecurringLogs.ts"
import { accessLine, accessLogEnabled } from "./AccessLog.ts"
import { acceptsJson } from "./ContentType.ts"
import { loggablePath } from "./NotifyPaths.ts"
import type { RouteTable } from "./RouteTable.ts"

/** Largest request body accepted: a batch of 1000 recipients and a 320-character text fit many times over. */
export const maxBodyBytes = 64 * 1024
/** Seconds a client is asked to wait when the database is unreachable. */
export const retryAfterSeconds = 2

/**
 * Headers on every answer, whatever route or refusal gives it: a browser must never sniff an
 * answer (JSON carrying a client's text, say) into a type it would run.
 */
export const everyAnswerHeaders = { "x-content-type-options": "nosniff" } as const

/** The correlation-id header: the client's own when acceptable, else one the service makes. */
export const requestIdHeader = "x-request-id"
const clientRequestId = /^[!-~]{1,64}$/

/** The client's X-Request-Id when it is 1 to 64 visible ASCII characters, else undefined. */
export const acceptableRequestId = (header: string | undefined): string | undefined =>
  header !== undefined && clientRequestId.test(header) ? header : undefined

/** A docs/integrators.md#errors error response. */
const errorResponse = (
  status: number,
  code: string,
  message: string,
  options: { readonly headers?: Record<string, string>; readonly details?: ReadonlyArray<ErrorDetail> } = {}
) =>
  HttpServerResponse.jsonUnsafe(
    errorBody(code, message, options.details === undefined ? {} : { details: options.details }),
    { status, headers: options.headers ?? {} }
  )

/** The answer while the database cannot be reached. */
const serviceUnavailable = () =>
  errorResponse(503, "service_unavailable", "The service is temporarily unavailable; retry later", {
    headers: { "retry-after": String(retryAfterSeconds) }
  })

const internalError = () => errorResponse(500, "internal_error", "Internal server error")

/** The body of an error status the platform answered without one (a parse failure, an abort). */
const platformAnswers: Readonly<Record<number, () => HttpServerResponse.HttpServerResponse>> = {
  400: () => errorResponse(400, "parse_error", "The request body could not be read"),
  404: () => errorResponse(404, "not_found", "No such route"),
  413: () => errorResponse(413, "payload_too_large", `Request body exceeds ${maxBodyBytes} bytes`),
  415: () => errorResponse(415, "unsupported_media_type", "Content-Type must be application/json"),
  500: internalError,
  503: serviceUnavailable
}

const decoder = new TextDecoder()

/** Whether a response is the spec's 503 service_unavailable (the database cannot serve now): it gets Retry-After. */
const isServiceUnavailable = (response: HttpServerResponse.HttpServerResponse): boolean => {
  if (response.status !== 503 || response.body._tag !== "Uint8Array") return false
  try {
    return (
      (JSON.parse(decoder.decode(response.body.body)) as { error?: { code?: unknown } }).error?.code ===
      "service_unavailable"
    )
  } catch {
    return false
  }
}

/** The API routes: each of them reads the database (the key or the token at least). */
const isApiPath = (path: string) => path.startsWith("/api/sms/v2/") || path.startsWith("/admin/v1/")

const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/**
 * The edge middleware over the routes of `routes`. `pagePaths` answer HTML, other files or text, not
 * JSON (the docs page, the console and its assets): they are exempt from the Accept check.
 */
export const makeEdge = (routes: RouteTable, pagePaths: ReadonlySet<string>) =>
  HttpRouter.middleware<{ handles: HttpServerError.HttpServerError }>()(
    Effect.gen(function* () {
      const ids = yield* Ids
      const write = accessLogEnabled(yield* References.MinimumLogLevel) ? yield* AccessLogWriter : undefined
      // an outage is logged when it starts and when an API call succeeds again, not per request
      const databaseOutage = makeOutageLog()
      return (httpEffect) =>
        Effect.gen(function* () {
          // the duration is real time, whatever clock the service judges by (the test clock stands still)
          const started = process.hrtime.bigint()
          const request = yield* HttpServerRequest.HttpServerRequest
          const path = pathOf(request.url)
          const requestId = acceptableRequestId(request.headers[requestIdHeader]) ?? (yield* ids.uuid)

          const routeNotFound = () => {
            const allowed = routes.allowedMethods(path)
            if (allowed.length === 0) return errorResponse(404, "not_found", "No such route")
            if (!allowed.includes(request.method === "HEAD" ? "GET" : request.method)) {
              return errorResponse(
                405,
                "method_not_allowed",
                `${request.method} is not allowed here; use ${allowed.join(", ")}`,
                {
                  headers: { allow: allowed.join(", ") }
                }
              )
            }
            // A route has this path and method, yet the router refused a parameter: one it cannot
            // decode, or one longer than it accepts (100 characters). 400 naming those that are no
            // text a path id may hold, as the API answers them; else 404, as for any id naming nothing.
            const invalid = routes.invalidParams(path)
            return invalid.length > 0
              ? errorResponse(400, "validation_error", "Invalid request path", { details: invalid })
              : errorResponse(404, "not_found", "No such resource")
          }

          // what escaped the stores' typed failures: a database outage is still a 503, anything else a fault of ours
          const unexpected = (failure: unknown) =>
            isDatabaseOutage(failure)
              ? Effect.succeed(serviceUnavailable())
              : Effect.logError("request failed", failure).pipe(Effect.as(internalError()))

          const answered = yield* !pagePaths.has(path) && !acceptsJson(request.headers.accept)
            ? Effect.succeed(errorResponse(406, "not_acceptable", "This API answers application/json only"))
            : httpEffect.pipe(
                Effect.provideService(HttpServerRequest.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
                Effect.catchReason("HttpServerError", "RouteNotFound", () => Effect.succeed(routeNotFound())),
                Effect.catchTag("HttpServerError", HttpServerRespondable.toResponse),
                Effect.catchDefect((defect) =>
                  HttpServerRespondable.isRespondable(defect)
                    ? HttpServerRespondable.toResponse(defect)
                    : unexpected(defect)
                ),
                Effect.annotateLogs({ request_id: requestId, method: request.method, path: loggablePath(path) })
              )
          // an error status the platform answered without a body gets the spec's body (415: always ours)
          const fallback =
            answered.status >= 400 && (answered.body._tag === "Empty" || answered.status === 415)
              ? platformAnswers[answered.status]
              : undefined
          const unavailable = isServiceUnavailable(fallback?.() ?? answered)
          if (unavailable && isApiPath(path))
            yield* databaseOutage.failed("database unreachable: API calls answer 503 service_unavailable")
          const identified = HttpServerResponse.setHeaders(fallback?.() ?? answered, {
            ...everyAnswerHeaders,
            [requestIdHeader]: requestId,
            ...(unavailable ? { "retry-after": String(retryAfterSeconds) } : {})
          })
          // the rest of a body over the limit is not read: the connection closes after the 413, and
          // says so (a chunked one was closed while the answer announced keep-alive)
          const response =
            identified.status === 413 ? HttpServerResponse.setHeader(identified, "connection", "close") : identified
          if (response.status < 300 && isApiPath(path))
            yield* databaseOutage.succeeded("database reachable again: API calls answered")

          if (write !== undefined) {
            const ms = Math.round(Number(process.hrtime.bigint() - started) / 10_000) / 100
            write(
              accessLine(
                { method: request.method, path: loggablePath(path), status: response.status, ms, requestId },
                logTimeMillis()
              )
            )
          }
          return response
        })
    }),
    { global: true }
  )
