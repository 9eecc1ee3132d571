/**
 * Every route the service answers, read from its definitions so that a new route is fuzzed
 * without touching the fuzz: the HttpApi endpoints (public, operator, /metrics) with their
 * request schemas, their security and the statuses they declare; and the plain routes of
 * `declaredRoutes` (health, console, docs, OpenAPI document), which have no schema.
 */
import type { Schema } from "effect"
import { HttpApi, type HttpApiGroup, type HttpApiMiddleware, HttpApiSchema } from "effect/http-api"
import { AdminApi, AdminAuth } from "../../../src/admin/AdminApi.ts"
import { Api } from "../../../src/api/Api.ts"
import { ApiKeyAuth } from "../../../src/api/Security.ts"
import { MetricsApi } from "../../../src/admin/MetricsRoute.ts"
import { declaredRoutes } from "../../../src/app/HttpApp.ts"

/** Which credential a route wants. */
export type Auth = "apiKey" | "operator" | "none"

export interface FuzzRoute {
  /** `METHOD /path/:param`, as the counts print it. */
  readonly key: string
  readonly method: string
  /** The route's path, parameters written `:name`. */
  readonly path: string
  readonly paramNames: ReadonlyArray<string>
  readonly auth: Auth
  /** The schemas of the request's parts; a plain route has none. */
  readonly schemas: {
    readonly params?: Schema.Top
    readonly query?: Schema.Top
    readonly headers?: Schema.Top
    /** The JSON body. */
    readonly payload?: Schema.Top
  }
  /** Each status the definition declares, with the schemas its body may have; absent on a plain route. */
  readonly answers?: ReadonlyMap<number, ReadonlyArray<Schema.Top>>
  /** Matches a raw request path (no query) of this route. */
  readonly pattern: RegExp
}

const patternOf = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split("/")
      .map((s) => (s.startsWith(":") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/")}$`
  )

const paramsOf = (path: string) =>
  path
    .split("/")
    .filter((s) => s.startsWith(":"))
    .map((s) => s.slice(1))

const authOf = (middleware: ReadonlySet<HttpApiMiddleware.AnyService>): Auth => {
  const keys: ReadonlySet<unknown> = middleware
  return keys.has(ApiKeyAuth) ? "apiKey" : keys.has(AdminAuth) ? "operator" : "none"
}

const endpointsOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const found: Array<FuzzRoute> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware, successes, errors }) => {
      const answers = new Map<number, ReadonlyArray<Schema.Top>>()
      for (const map of [successes, errors]) {
        for (const [status, schemas] of map) {
          // a success with headers (Location): its body is what the fuzz can check
          const bodies = schemas.map((s) => (HttpApiSchema.isWithHeaders(s) ? s.schema : s))
          answers.set(status, [...(answers.get(status) ?? []), ...bodies])
        }
      }
      const payload = [...endpoint.payload.values()][0]?.schemas[0]
      found.push({
        key: `${endpoint.method} ${endpoint.path}`,
        method: endpoint.method,
        path: endpoint.path,
        paramNames: paramsOf(endpoint.path),
        auth: authOf(middleware),
        schemas: {
          ...(endpoint.params === undefined ? {} : { params: endpoint.params }),
          ...(endpoint.query === undefined ? {} : { query: endpoint.query }),
          ...(endpoint.headers === undefined ? {} : { headers: endpoint.headers }),
          ...(payload === undefined ? {} : { payload })
        },
        answers,
        pattern: patternOf(endpoint.path)
      })
    }
  })
  return found
}

/** Every route: the endpoints of the three HttpApis, then every other declared route as a plain one. */
export const fuzzRoutes = (): ReadonlyArray<FuzzRoute> => {
  const endpoints = [...endpointsOf(Api), ...endpointsOf(AdminApi), ...endpointsOf(MetricsApi)]
  const known = new Set(endpoints.map((r) => r.key))
  const plain = declaredRoutes
    .filter(([method, path]) => !known.has(`${method} ${path}`))
    .map(
      ([method, path]): FuzzRoute => ({
        key: `${method} ${path}`,
        method,
        path,
        paramNames: paramsOf(path),
        auth: "none",
        schemas: {},
        pattern: patternOf(path)
      })
    )
  return [...endpoints, ...plain]
}

/** The endpoints a request (method, raw path) reaches; HEAD reaches what GET does. */
export const routesReached = (
  routes: ReadonlyArray<FuzzRoute>,
  method: string,
  path: string
): ReadonlyArray<FuzzRoute> => {
  const asked = method === "HEAD" ? "GET" : method
  return routes.filter((r) => r.method === asked && r.pattern.test(path))
}
