/**
 * The boundary every store passes its statements through: what a failed statement means is
 * decided here, once. A failure that running the same work again may get past (the database
 * unreachable or not serving now, a deadlock or serialization conflict) becomes
 * DatabaseUnavailable, a typed failure; any other is a fault of ours and dies (the edge answers
 * 500 internal_error and logs it). Nothing above the stores sees a SqlError.
 */
import { Effect } from "effect"
import type { SqlError } from "effect/sql"
import { DatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { isTransient } from "./SqlErrors.ts"

/** `effect` with its SqlError decided: DatabaseUnavailable when transient, a defect otherwise. */
export const fromDatabase = <A, R>(effect: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, DatabaseUnavailable, R> =>
  Effect.catchTag(effect, "SqlError", (error) => (isTransient(error) ? Effect.fail(new DatabaseUnavailable(error)) : Effect.die(error)))
