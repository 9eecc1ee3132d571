/**
 * A statement the database could not run now: it cannot be reached or cannot serve (connection
 * refused or reset, starting up, shutting down, out of connections), or the statement lost a
 * conflict with a concurrent one (a deadlock, a serialization failure). To a client it is the
 * spec's 503 `service_unavailable` (retry identically; the edge adds Retry-After); to background
 * work, a transient failure (run it again). The cause is kept for the logs, never answered.
 */
import type { Effect } from "effect"
import { ServiceUnavailable } from "../domain/Errors.ts"
import { isConnectionFailure } from "./SqlErrors.ts"

export class DatabaseUnavailable extends ServiceUnavailable {
  readonly reason: unknown

  constructor(reason: unknown) {
    super({ error: { code: "service_unavailable", message: "The service is temporarily unavailable; retry later" } })
    this.reason = reason
  }
}

/** Whether `failure` is a database outage or conflict that running the same work again may get past. */
export const isDatabaseUnavailable = (failure: unknown): failure is DatabaseUnavailable =>
  failure instanceof DatabaseUnavailable

/**
 * Whether a failure that escaped the typed ones (a defect) still means the database is out: a
 * DatabaseUnavailable, or a connection failure raised outside a store (while a connection or a
 * transaction was being opened). The edge answers it 503 rather than 500.
 */
export const isDatabaseOutage = (failure: unknown): boolean =>
  isDatabaseUnavailable(failure) || isConnectionFailure(failure)

/** What a store's statements return: `A`, or a database outage (and the failures `E` of its own). */
export type Fails<A, E = never> = Effect.Effect<A, E | DatabaseUnavailable>
