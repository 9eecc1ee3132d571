/** `GET /health` (the process is up) and `GET /ready` (the database answers), for orchestrators. */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { retryAfterSeconds } from "./Edge.ts"

export const HealthRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/health", HttpServerResponse.jsonUnsafe({ status: "ok" })),
  HttpRouter.add("GET", "/ready", Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql`SELECT 1`.pipe(
      Effect.timeout("2 seconds"),
      Effect.as(HttpServerResponse.jsonUnsafe({ status: "ready" })),
      Effect.catchCause(() =>
        Effect.succeed(HttpServerResponse.jsonUnsafe(
          { error: { code: "service_unavailable", message: "The database is not reachable" } },
          { status: 503, headers: { "retry-after": String(retryAfterSeconds) } }
        )))
    )
  }))
)

export const healthPaths: ReadonlyArray<readonly [string, string]> = [["GET", "/health"], ["GET", "/ready"]]
