/**
 * Whether a failure means "the database cannot be reached right now" (answered 503
 * service_unavailable with Retry-After, like `/ready`) rather than a fault of ours (500).
 * The one place that decides it, for every SQL failure that reaches the HTTP edge.
 */
import { SqlError } from "effect/sql"

/** SQLSTATEs of a server that is up but will not serve us now, beyond class 08 (connection exception). */
const unavailableStates = new Set([
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up, shutting down, in recovery
  "53300" // too_many_connections
])

/** Node socket and resolver errors on the way to the server. */
const unreachableErrnos = new Set([
  "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH",
  "ENOTFOUND", "EAI_AGAIN"
])

const isUnavailableCode = (code: string): boolean =>
  (code.length === 5 && code.startsWith("08")) || unavailableStates.has(code) || unreachableErrnos.has(code)

const property = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined

/**
 * True when `failure` (a defect or error, however wrapped) is a SqlError whose reason is a
 * connection or authentication failure (connect and socket errors, connect timeouts, a closed
 * connection), or carries in its cause chain a connection-class SQLSTATE (08xxx, 57P01-57P03,
 * 53300) or a socket errno. @effect/sql-pg reports a server's refusal as UnknownError with the
 * server's fields, `code` among them, on the reason's cause.
 */
export const isDatabaseUnavailable = (failure: unknown): boolean => {
  let current: unknown = failure
  // bounded: a cause chain is short, and a cyclic one must not hang the answer
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (SqlError.isSqlError(current)) {
      const tag = current.reason._tag
      if (tag === "ConnectionError" || tag === "AuthenticationError") return true
      current = current.reason.cause
      continue
    }
    const code = property(current, "code")
    if (typeof code === "string" && isUnavailableCode(code)) return true
    current = property(current, "cause")
  }
  return false
}
