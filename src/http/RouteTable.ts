/**
 * Which methods each known path allows, derived from the API definitions, so that a known path
 * with the wrong method answers 405 rather than the router's 404; and which of its parameters
 * are not text a path id may be, so that a path the router refused answers 400 naming them.
 */
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import type { ErrorDetail } from "../domain/Errors.ts"
import { isStorableText, unstorableTextMessage } from "../domain/Text.ts"

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
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => routes.push([endpoint.method, endpoint.path])
  })
  return routes
}

const toPattern = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split("/")
      .map((seg) => (seg.startsWith(":") ? "([^/]+)" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/")}$`
  )

/** What is wrong with a raw path parameter as a path id, if anything. */
const paramProblem = (segment: string): string | undefined => {
  try {
    return isStorableText(decodeURIComponent(segment)) ? undefined : unstorableTextMessage
  } catch {
    return "must be percent-encoded UTF-8 text"
  }
}

/** What the edge knows of the declared routes, by raw (undecoded) request path. */
export interface RouteTable {
  /** The methods the routes of `path` allow, sorted (empty when no route has that path). */
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
  /**
   * The path parameters of `path` that are no path id: their percent-encoding is not UTF-8 (the
   * router cannot decode them), or they hold a NUL or an unpaired surrogate (as the API refuses).
   */
  readonly invalidParams: (path: string) => ReadonlyArray<ErrorDetail>
}

/** The route table of the declared routes. */
export const routeTable = (declared: ReadonlyArray<Route>): RouteTable => {
  const byPath = new Map<string, RoutePattern>()
  for (const [method, path] of declared) {
    const entry = byPath.get(path) ?? {
      pattern: toPattern(path),
      params: path
        .split("/")
        .filter((seg) => seg.startsWith(":"))
        .map((seg) => seg.slice(1)),
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
    invalidParams: (path) => {
      const problems = new Map<string, string>()
      for (const r of routes) {
        const match = r.pattern.exec(path)
        if (match === null) continue
        r.params.forEach((field, i) => {
          const problem = paramProblem(match[i + 1]!)
          if (problem !== undefined) problems.set(field, problem)
        })
      }
      return [...problems].map(([field, message]) => ({ field, message }))
    }
  }
}
