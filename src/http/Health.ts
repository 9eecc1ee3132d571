/**
 * `GET /health` (the process is up) and `GET /ready` (it can serve: the database takes writes (a
 * standby or a read-only primary, during a failover, does not: docs/failover.md) and at
 * least one provider route is bound, or on standby: its binds are the fleet's and other
 * processes hold them, and this one hands its messages to them), for orchestrators. `/ready`
 * shows every route's state and the bind slot this process holds (`slot.held`, null on standby),
 * so an operator sees why a bind fails, and which process holds it, without reading the logs.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { DatabaseHealth, type DatabaseState } from "../db/DatabaseHealth.ts"
import { errorBody } from "../domain/Errors.ts"
import { Provider, type RouteHealth } from "../provider/Provider.ts"
import { retryAfterSeconds } from "./Edge.ts"

/** What `/ready` found; ready when the database takes writes and a route is bound. */
export interface Readiness {
  readonly database: DatabaseState
  readonly routes: ReadonlyArray<RouteHealth>
}

/** The database's state in a detail of `/ready`, and as a problem (undefined when it takes writes). */
const databaseDetail = (state: DatabaseState): { readonly detail: string; readonly problem: string | undefined } => {
  switch (state._tag) {
    case "Writable":
      return { detail: "answers", problem: undefined }
    case "ReadOnly":
      return { detail: `cannot take writes: ${state.why}`, problem: `the database cannot take writes: ${state.why}` }
    case "Unreachable":
      return { detail: "not reachable", problem: "the database is not reachable" }
  }
}

/** The 200 body, or the 503 error body whose details name the database's and each route's state. */
export const readinessAnswer = ({
  database,
  routes
}: Readiness): { readonly status: 200 | 503; readonly body: unknown } => {
  const bound = routes.some((r) => r.connected || r.slot?.held === null)
  const { detail, problem } = databaseDetail(database)
  if (problem === undefined && bound) return { status: 200, body: { status: "ready", routes } }
  const problems = [...(problem === undefined ? [] : [problem]), ...(bound ? [] : ["no provider route is bound"])]
  const message = problems.join("; ")
  return {
    status: 503,
    body: errorBody("service_unavailable", `${message.charAt(0).toUpperCase()}${message.slice(1)}`, {
      details: [
        { field: "database", message: detail },
        ...routes.map((r) => ({
          field: `routes.${r.route}`,
          message: `${r.connected ? "bound" : r.slot?.held === null ? "standby" : "not bound"}: ${r.detail}`
        }))
      ]
    })
  }
}

export const HealthRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/health", HttpServerResponse.jsonUnsafe({ status: "ok" })),
  HttpRouter.add(
    "GET",
    "/ready",
    Effect.gen(function* () {
      const provider = yield* Provider
      const [database, routes] = yield* Effect.all([(yield* DatabaseHealth).state, provider.health], { concurrency: 2 })
      const { status, body } = readinessAnswer({ database, routes })
      return HttpServerResponse.jsonUnsafe(
        body,
        status === 200 ? { status } : { status, headers: { "retry-after": String(retryAfterSeconds) } }
      )
    })
  )
)

export const healthPaths: ReadonlyArray<readonly [string, string]> = [
  ["GET", "/health"],
  ["GET", "/ready"]
]
