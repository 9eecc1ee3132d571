/**
 * The HTTP edge: every answer the router or the platform would give outside a handler becomes
 * a JSON body of spec 2.10 — 404/405 for routes, 406 for Accept, 413 for a body over the limit,
 * 415 for a non-JSON body, 503 with Retry-After while the database is unreachable, 500 that
 * reveals nothing. One access-log line per request, without query strings or bodies.
 */
import { ByteSize, Effect } from "effect"
import { HttpRouter, type HttpServerError, HttpServerRequest, HttpServerRespondable, HttpServerResponse } from "effect/http"
import { SqlError } from "effect/sql"
import { errorBody } from "../domain/Errors.ts"
import { acceptsJson } from "./ContentType.ts"

/** Largest request body accepted: a batch of 1000 recipients and a 320-character text fit many times over. */
export const maxBodyBytes = 64 * 1024
/** Seconds a client is asked to wait when the database is unreachable. */
export const retryAfterSeconds = 2

const json = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  Effect.succeed(HttpServerResponse.jsonUnsafe(errorBody(code, message), { status, headers }))

const isDatabaseDown = (defect: unknown): boolean =>
  SqlError.isSqlError(defect) && (defect.reason._tag === "ConnectionError" || defect.reason._tag === "AuthenticationError")

/** Paths that answer HTML, not JSON: exempt from the Accept check. */
const htmlPaths = new Set(["/api/sms/v2/docs", "/admin/v1/docs"])

const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

export const makeEdge = (allowedMethods: (path: string) => ReadonlyArray<string>) =>
  HttpRouter.middleware<{ handles: HttpServerError.HttpServerError }>()((httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = pathOf(request.url)
      const started = Date.now()
      const response = yield* (!htmlPaths.has(path) && !acceptsJson(request.headers.accept)
        ? json(406, "not_acceptable", "This API answers application/json only")
        : httpEffect.pipe(
          Effect.provideService(HttpServerRequest.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
          Effect.catchReason("HttpServerError", "RouteNotFound", () => {
            const allowed = allowedMethods(path)
            return allowed.length === 0
              ? json(404, "not_found", "No such route")
              : json(405, "method_not_allowed", `${request.method} is not allowed here; use ${allowed.join(", ")}`, {
                allow: allowed.join(", ")
              })
          }),
          Effect.flatMap((res) =>
            res.status === 415
              ? json(415, "unsupported_media_type", "Content-Type must be application/json")
              : Effect.succeed(res)),
          Effect.catchDefect((defect) => {
            if (HttpServerRespondable.isRespondable(defect)) {
              return HttpServerRespondable.toResponse(defect).pipe(Effect.flatMap((res) =>
                res.status === 413
                  ? json(413, "payload_too_large", `Request body exceeds ${maxBodyBytes} bytes`)
                  : Effect.succeed(res)))
            }
            if (isDatabaseDown(defect)) {
              return Effect.logWarning("database unreachable").pipe(Effect.andThen(
                json(503, "service_unavailable", "The service is temporarily unavailable; retry later", {
                  "retry-after": String(retryAfterSeconds)
                })
              ))
            }
            return Effect.logError("request failed", defect).pipe(
              Effect.andThen(json(500, "internal_error", "Internal server error"))
            )
          })
        ))
      yield* Effect.logDebug("http").pipe(Effect.annotateLogs({
        method: request.method,
        path,
        status: response.status,
        ms: Date.now() - started
      }))
      return response
    }), { global: true })
