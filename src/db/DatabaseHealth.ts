/**
 * What the database can do now, for `/ready`: take writes, answer but not take writes (a standby,
 * a primary turned read-only: a failover under way), or not answer within 2 s. A load balancer
 * stops sending traffic to a process whose database cannot take writes (docs/failover.md).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { whyReadOnly, writabilityQuery } from "./RetiringClient.ts"
import { readOnlyState, sqlStateOf } from "./SqlErrors.ts"

export type DatabaseState =
  | { readonly _tag: "Writable" }
  /** It answers, yet refuses writes; `why` says what it reported. */
  | { readonly _tag: "ReadOnly"; readonly why: string }
  | { readonly _tag: "Unreachable" }

const unreachable: DatabaseState = { _tag: "Unreachable" }

/** Why a failed statement says the server cannot take writes (25006: a refused connection or write), if it does. */
const readOnlyReason = (error: SqlError.SqlError): string | undefined => {
  if (sqlStateOf(error) !== readOnlyState) return undefined
  const cause = error.reason.cause
  return cause instanceof Error ? cause.message : "it refused a write"
}

export class DatabaseHealth extends Context.Service<
  DatabaseHealth,
  {
    /** Whether the database takes writes now (answered within 2 s); never fails. */
    readonly state: Effect.Effect<DatabaseState>
  }
>()("sms/DatabaseHealth") {
  static readonly layer = Layer.effect(
    DatabaseHealth,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const ask = sql.unsafe<{ readonly inRecovery: unknown; readonly readOnly: unknown }>(writabilityQuery).pipe(
        Effect.map(([row]): DatabaseState => {
          const why = whyReadOnly(row?.inRecovery, row?.readOnly)
          return why === undefined ? { _tag: "Writable" } : { _tag: "ReadOnly", why }
        }),
        Effect.catchIf(SqlError.isSqlError, (error) => {
          const why = readOnlyReason(error)
          return Effect.succeed<DatabaseState>(why === undefined ? unreachable : { _tag: "ReadOnly", why })
        })
      )
      return DatabaseHealth.of({
        state: ask.pipe(
          Effect.timeout("2 seconds"),
          Effect.catchCause(() => Effect.succeed(unreachable))
        )
      })
    })
  )
}
