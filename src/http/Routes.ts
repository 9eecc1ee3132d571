/**
 * Which methods each known path allows, derived from the API definitions, so that a known path
 * with the wrong method answers 405 rather than the router's 404.
 */
import { HttpApi, type HttpApiGroup } from "effect/http-api"

interface RoutePattern {
  readonly pattern: RegExp
  readonly methods: Set<string>
}

type Route = readonly [method: string, path: string]

/** Every (method, path) an API declares. */
export const routesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(api, { onGroup: () => {}, onEndpoint: ({ endpoint }) => routes.push([endpoint.method, endpoint.path]) })
  return routes
}

const toPattern = (path: string): RegExp =>
  new RegExp(`^${path.split("/").map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}$`)

/** A lookup from a request path to the methods its routes allow (empty when no route has that path). */
export const methodTable = (declared: ReadonlyArray<Route>) => {
  const byPath = new Map<string, RoutePattern>()
  const add = (method: string, path: string) => {
    const entry = byPath.get(path) ?? { pattern: toPattern(path), methods: new Set<string>() }
    entry.methods.add(method)
    byPath.set(path, entry)
  }
  for (const [method, path] of declared) add(method, path)
  const routes = [...byPath.values()]
  return (path: string): ReadonlyArray<string> => {
    const allowed = new Set<string>()
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m)
    return [...allowed].sort()
  }
}
