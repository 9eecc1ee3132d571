/**
 * What a failed statement says about the database: unreachable for now, or reached but unable
 * to take a write (a standby, a primary shutting down: a failover under way; retry later, answer
 * 503 service_unavailable with Retry-After, as `/ready` does), a conflict with a concurrent
 * transaction (run it again), or anything else (a fault of ours: 500). The one place that
 * decides it, for the HTTP edge and for the background work alike (docs/failover.md).
 */
import { SqlError } from "effect/sql"

const property = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined

/** The SQLSTATE the server reported, when there is one (@effect/sql-pg keeps the server's fields on the reason's cause). */
export const sqlStateOf = (error: SqlError.SqlError): string | undefined => {
  const code = property(error.reason.cause, "code")
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

/** The SQLSTATE of a write refused by a server that cannot take one: a standby, or a read-only primary. */
export const readOnlyState = "25006" // read_only_sql_transaction

/** Server states that mean "not now", beyond class 08 (connection exception). */
const unavailableStates = new Set([
  readOnlyState,
  "57P01", // admin_shutdown: a primary shutting down (a switchover), sessions ended
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up, shutting down, in recovery
  "53300" // too_many_connections
])

/**
 * What a standby says when asked for work only a primary does, under other SQLSTATEs than
 * 25006 (a lock stronger than RowExclusiveLock: 55000; a transaction id: XX000). PostgreSQL's
 * messages are English unless lc_messages says otherwise; 25006 carries the usual case.
 */
const duringRecovery = /during recovery|recovery is in progress/i

/**
 * True when `error` is the server refusing work because it cannot take writes now: 25006, or a
 * standby's "during recovery" refusal. The connection it came on reaches a server that is not
 * (or no longer) the primary, so the pool retires it (RetiringClient.ts).
 */
export const isReadOnlyServer = (error: SqlError.SqlError): boolean => {
  const state = sqlStateOf(error)
  if (state === readOnlyState) return true
  const message = property(error.reason.cause, "message")
  return (state === "55000" || state === "XX000") && typeof message === "string" && duringRecovery.test(message)
}

/** Node socket and resolver errors on the way to the server. */
const unreachableErrnos = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

const isUnavailableCode = (code: string): boolean =>
  (code.length === 5 && code.startsWith("08")) || unavailableStates.has(code) || unreachableErrnos.has(code)

/**
 * True when `failure` (an error or a defect, however wrapped) means the database cannot be
 * reached or cannot serve right now: a SqlError whose reason is a connection failure (connect
 * and socket errors, connect timeouts, a closed connection) or a refused authentication, a
 * server that cannot take writes (isReadOnlyServer: a failover under way), or a cause chain
 * carrying a connection-class SQLSTATE (08xxx, 25006, 57P01-57P03, 53300) or a socket errno.
 */
export const isConnectionFailure = (failure: unknown): boolean => {
  let current: unknown = failure
  // bounded: a cause chain is short, and a cyclic one must not hang the answer
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (SqlError.isSqlError(current)) {
      const tag = current.reason._tag
      if (tag === "ConnectionError" || tag === "AuthenticationError") return true
      // a statement timeout without a SQLSTATE is the client's own deadline: the server did not answer
      if (tag === "StatementTimeoutError" && sqlStateOf(current) === undefined) return true
      if (isReadOnlyServer(current)) return true
      current = current.reason.cause
      continue
    }
    const code = property(current, "code")
    if (typeof code === "string" && isUnavailableCode(code)) return true
    current = property(current, "cause")
  }
  return false
}

/** True when running the same work again may succeed: the database is unavailable, or a deadlock or serialization conflict. */
export const isTransient = (error: unknown): boolean =>
  isConnectionFailure(error) ||
  (SqlError.isSqlError(error) && (error.reason._tag === "DeadlockError" || error.reason._tag === "SerializationError"))
