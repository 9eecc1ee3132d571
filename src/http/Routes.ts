/**
 * Which methods each known path allows, derived from the API definitions, so that a known path
 * with the wrong method answers 405 rather than the router's 404; and which of its parameters
 * the router could not decode, so that such a path answers 400 naming them.
 */
import { HttpApi, type HttpApiGroup } from "effect/http-api"

interface RoutePattern {
  readonly pattern: RegExp
  /** The parameter name of each capture group, in order. */
  readonly params: ReadonlyArray<string>
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
  new RegExp(`^${path.split("/").map((seg) => (seg.startsWith(":") ? "([^/]+)" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}$`)

const decodes = (segment: string): boolean => {
  try {
    decodeURIComponent(segment)
    return true
  } catch {
    return false
  }
}

/** What the edge knows of the declared routes, by raw (undecoded) request path. */
export interface RouteTable {
  /** The methods the routes of `path` allow, sorted (empty when no route has that path). */
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
  /** The path parameters of `path` whose percent-encoding is not UTF-8 (the router cannot decode them). */
  readonly undecodableParams: (path: string) => ReadonlyArray<string>
}

/** The route table of the declared routes. */
export const routeTable = (declared: ReadonlyArray<Route>): RouteTable => {
  const byPath = new Map<string, RoutePattern>()
  for (const [method, path] of declared) {
    const entry = byPath.get(path) ?? {
      pattern: toPattern(path),
      params: path.split("/").filter((seg) => seg.startsWith(":")).map((seg) => seg.slice(1)),
      methods: new Set<string>()
    }
    entry.methods.add(method)
    byPath.set(path, entry)
  }
  const routes = [...byPath.values()]
  return {
    allowedMethods: (path) => {
      const allowed = new Set<string>()
      for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m)
      return [...allowed].sort()
    },
    undecodableParams: (path) => {
      const names = new Set<string>()
      for (const r of routes) {
        const match = r.pattern.exec(path)
        if (match !== null) r.params.forEach((name, i) => decodes(match[i + 1]!) || names.add(name))
      }
      return [...names]
    }
  }
}
