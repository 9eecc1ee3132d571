/**
 * What a failed statement says about the database: unreachable for now (retry later, answer
 * 503), a conflict with a concurrent transaction (run it again), or anything else (a bug).
 */
import { SqlError } from "effect/sql"

/** The SQLSTATE the server reported, when there is one. */
export const sqlStateOf = (error: SqlError.SqlError): string | undefined => {
  const cause: unknown = error.reason.cause
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

/** Server states that mean "not now": shutting down, starting up, crashed, too many connections. */
const unavailableStates = new Set(["57P01", "57P02", "57P03", "53300"])

/**
 * True when the database cannot be reached or cannot serve right now: any connection-class
 * failure (SQLSTATE 08xxx, a socket or connect timeout, pool exhaustion), an administrative or
 * crash shutdown, start-up, or too many connections.
 */
export const isDatabaseUnavailable = (error: unknown): boolean => {
  if (!SqlError.isSqlError(error)) return false
  const state = sqlStateOf(error)
  if (state !== undefined) return state.startsWith("08") || unavailableStates.has(state)
  // no SQLSTATE: the socket failed (connect, write, lost connection), or a statement timed out
  return error.reason._tag === "ConnectionError" || error.reason._tag === "StatementTimeoutError"
}

/** True when running the same work again may succeed: the database is unavailable, or a deadlock or serialization conflict. */
export const isTransient = (error: unknown): boolean =>
  isDatabaseUnavailable(error) ||
  (SqlError.isSqlError(error) && (error.reason._tag === "DeadlockError" || error.reason._tag === "SerializationError"))
