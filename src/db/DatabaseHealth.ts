/** Whether the database answers now, for `/ready`: a trivial statement within 2 s. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

export class DatabaseHealth extends Context.Service<
  DatabaseHealth,
  {
    /** True when the database answered a trivial statement within 2 s; never fails. */
    readonly answers: Effect.Effect<boolean>
  }
>()("sms/DatabaseHealth") {
  static readonly layer = Layer.effect(
    DatabaseHealth,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return DatabaseHealth.of({
        answers: sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.as(true),
          Effect.catchCause(() => Effect.succeed(false))
        )
      })
    })
  )
}
