/**
 * The generated requests: for a route, a valid-ish request built from its schemas' samples and
 * the fixtures' real ids, credentials and cursors, then (most of the time) one kind of hostility
 * applied to it: a bad field, a bad body, a bad content type, a bad path id, a bad query, bad
 * credentials, a bad Idempotency-Key, odd headers, another method.
 */
import fc from "fast-check"
import { isStorableText } from "../../../src/domain/Text.ts"
import type { Fixtures } from "./Fixtures.ts"
import {
  encodeUtf16,
  hostileAccept,
  hostileAuthorization,
  hostileBody,
  hostileContentType,
  hostileId,
  hostileIdempotencyKey,
  hostileQuery,
  hostileRequestId,
  hostileValue,
  otherMethod,
  RawJson,
  toJsonText
} from "./Hostile.ts"
import { realistic } from "./Realistic.ts"
import type { FuzzRoute } from "./Routes.ts"
import type { Json, RouteSamples } from "./Samples.ts"

export const requestKinds = [
  "valid",
  "field",
  "body",
  "content-type",
  "path",
  "query",
  "auth",
  "idempotency-key",
  "headers",
  "method"
] as const
export type RequestKind = (typeof requestKinds)[number]

export interface FuzzRequest {
  /** The key of the route it was made for. */
  readonly route: string
  readonly kind: RequestKind
  readonly method: string
  /** As sent: percent-encoded, with its query string. */
  readonly path: string
  /** A header given several values is sent once per value. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly body?: string | Uint8Array
  /** Sent with `Transfer-Encoding: chunked` rather than a Content-Length. */
  readonly chunked: boolean
  /** The body field or path parameter set to text no field may hold (NUL, an unpaired surrogate), if any. */
  readonly unstorable?: string
}

/** A request before it is written: its parts, still editable. */
interface Draft {
  readonly method: string
  readonly params: Readonly<Record<string, string>>
  readonly query: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: Json | RawJson | string | Uint8Array | undefined
  readonly chunked: boolean
  readonly unstorable?: string
}

export interface RequestContext {
  readonly routes: ReadonlyArray<FuzzRoute>
  readonly samples: ReadonlyMap<string, RouteSamples>
  readonly fixtures: Fixtures
}

const pick = <A>(values: ReadonlyArray<A>, fallback: fc.Arbitrary<A>): fc.Arbitrary<A> =>
  values.length === 0 ? fallback : fc.constantFrom(...values)

const encodeQuery = (query: Readonly<Record<string, string>>) =>
  Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&")

/** The real ids a path parameter may take on `route`; routes that would disable the fixtures get spare ones. */
const realIds = (route: FuzzRoute, param: string, f: Fixtures): ReadonlyArray<string> => {
  switch (param) {
    case "org_id":
      // PATCH could disable SMS for the main organisation, and every later send would be refused
      return route.method === "PATCH"
        ? [f.orgs.spare, f.orgs.other]
        : [f.orgs.main, f.orgs.main, f.orgs.other, f.orgs.spare]
    case "message_id":
      return [...f.messageIds, ...f.otherMessageIds]
    case "batch_id":
      return [...f.batchIds, ...f.otherBatchIds]
    case "key_id":
      return f.spareKeyIds
    case "name":
      return ["FUZZ", "INFO", "SPARE 1"]
    default:
      return []
  }
}

const credentialFor = (route: FuzzRoute, f: Fixtures) => (route.auth === "operator" ? f.operatorToken : f.keys.full)

/** A valid-ish draft of `route`. */
const validDraft = (route: FuzzRoute, samples: RouteSamples, f: Fixtures): fc.Arbitrary<Draft> => {
  const params = fc.record(
    Object.fromEntries(
      route.paramNames.map((name) => [
        name,
        fc.oneof(
          { weight: 4, arbitrary: pick(realIds(route, name, f).map(encodeURIComponent), fc.uuid()) },
          {
            weight: 1,
            arbitrary: pick(
              samples.params.map((p) => encodeUtf16(p[name] ?? "")),
              fc.uuid()
            )
          }
        )
      ])
    )
  ) as fc.Arbitrary<Record<string, string>>
  const cursors = route.key.includes("message-batches") ? f.batchCursors : f.listCursors
  const query = pick(samples.queries, fc.constant<Readonly<Record<string, string>>>({})).chain((q) =>
    q.cursor === undefined
      ? fc.constant(encodeQuery(q))
      : fc
          .option(fc.constantFrom(...cursors), { nil: undefined })
          .map((c) => encodeQuery(c === undefined ? q : { ...q, cursor: c }))
  )
  const idempotency = pick(
    samples.headers.map((h) => h["idempotency-key"]),
    fc.constant(undefined)
  )
  const body =
    samples.payloads.length === 0
      ? fc.constant(undefined)
      : fc.constantFrom(...samples.payloads).chain((p) => realistic(p, samples, f))
  // one body in five goes chunked
  const chunked = fc.integer({ min: 0, max: 4 }).map((n) => n === 0)
  return fc
    .record({ params, query, idempotency, body, chunked })
    .map(({ params, query, idempotency, body, chunked }) => ({
      method: route.method,
      params,
      query,
      headers: {
        authorization: route.auth === "none" ? undefined : `Bearer ${credentialFor(route, f)}`,
        "content-type": body === undefined ? undefined : "application/json",
        "idempotency-key": idempotency
      },
      body,
      chunked
    }))
}

const withHeaders = (
  draft: Draft,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
): Draft => ({
  ...draft,
  headers: { ...draft.headers, ...headers }
})

const fieldPaths = (body: Json): ReadonlyArray<string> =>
  Object.entries(body).flatMap(([k, v]) => (Array.isArray(v) && v.length > 0 ? [k, `${k}.${v.length - 1}`] : [k]))

interface Mutated {
  readonly body: Json | RawJson
  readonly unstorable?: string
}

/** `body` with one field (possibly an array item) set to a hostile value, removed, or an unknown field added. */
const mutateField = (body: Json): fc.Arbitrary<Mutated> => {
  const paths = fieldPaths(body)
  const set = fc
    .tuple(paths.length === 0 ? fc.constant("text") : fc.constantFrom(...paths), hostileValue)
    .map(([path, value]): Mutated => {
      const [field, index] = path.split(".")
      const out: Record<string, unknown> = { ...body }
      if (index === undefined) out[field!] = value
      else out[field!] = (body[field!] as ReadonlyArray<unknown>).map((v, i) => (i === Number(index) ? value : v))
      return { body: out, ...(typeof value === "string" && !isStorableText(value) ? { unstorable: path } : {}) }
    })
  const drop =
    paths.length === 0
      ? set
      : fc.constantFrom(...Object.keys(body)).map((k): Mutated => {
          const { [k]: _dropped, ...rest } = body
          return { body: rest }
        })
  // written as text: a "__proto__" key would not survive an object, a deep value not a JSON.parse
  const extra = fc
    .tuple(fc.constantFrom("extra", "__proto__", "constructor", "TEXT", " text", "text\u0000", "\ud800"), hostileValue)
    .map(([k, v]): Mutated => {
      const rest = toJsonText(body).slice(1)
      return { body: new RawJson(`{${JSON.stringify(k)}:${toJsonText(v)}${rest === "}" ? "" : ","}${rest}`) }
    })
  return fc.oneof({ weight: 6, arbitrary: set }, { weight: 2, arbitrary: drop }, { weight: 1, arbitrary: extra })
}

const suffixes = ["/", "//", "/%00", "/..", "/%2e%2e", "%00", "%", "?", "/extra", ".json", "%20", ";x", "/%ED%A0%80"]

/** True when a percent-encoded path id does not decode to text a field may hold. */
const unstorableId = (id: string): boolean => {
  try {
    return !isStorableText(decodeURIComponent(id))
  } catch {
    // not UTF-8 once decoded: the edge refuses it the same way
    return true
  }
}

const isJson = (body: Draft["body"]): body is Json =>
  typeof body === "object" && !(body instanceof RawJson) && !(body instanceof Uint8Array)

/** One hostile kind applied to a valid draft; `queryNames` are the parameters the route's query may have. */
const mutate = (
  kind: RequestKind,
  route: FuzzRoute,
  draft: Draft,
  f: Fixtures,
  queryNames: ReadonlyArray<string>
): fc.Arbitrary<Draft> => {
  switch (kind) {
    case "valid":
      return fc.constant(draft)
    case "field":
      return isJson(draft.body) ? mutateField(draft.body).map((m) => ({ ...draft, ...m })) : fc.constant(draft)
    case "body":
      return hostileBody.map((body) => withHeaders({ ...draft, body }, { "content-type": "application/json" }))
    case "content-type":
      return hostileContentType.map((type) =>
        withHeaders({ ...draft, body: draft.body ?? "{}" }, { "content-type": type })
      )
    case "path":
      return route.paramNames.length === 0
        ? fc.constantFrom(...suffixes).map((suffix) => ({ ...draft, params: { "": suffix } }))
        : fc.tuple(fc.constantFrom(...route.paramNames), hostileId).map(([name, id]) => ({
            ...draft,
            params: { ...draft.params, [name]: id },
            ...(unstorableId(id) ? { unstorable: name } : {})
          }))
    case "query":
      return hostileQuery(queryNames).map((query) => ({ ...draft, query }))
    case "auth": {
      const valid = credentialFor(route, f)
      const others = [
        f.keys.full,
        f.keys.deliveryOnly,
        f.keys.noPermission,
        f.keys.revoked,
        f.keys.other,
        f.operatorToken
      ]
      return fc
        .tuple(
          hostileAuthorization(valid, others),
          fc.option(fc.constantFrom("x", f.orgs.main, ""), { freq: 4, nil: undefined })
        )
        .map(([authorization, organization]) => withHeaders(draft, { authorization, "x-organization": organization }))
    }
    case "idempotency-key":
      return hostileIdempotencyKey.map((key) => withHeaders(draft, { "idempotency-key": key }))
    case "headers":
      return fc.oneof(
        fc
          .record({
            accept: fc.option(hostileAccept, { nil: undefined }),
            "x-request-id": fc.option(hostileRequestId, { nil: undefined })
          })
          .map((h) => withHeaders(draft, h)),
        // a header sent twice
        fc
          .constantFrom("authorization", "idempotency-key", "content-type", "x-request-id", "accept", "x-organization")
          .map((name) => {
            const value = draft.headers[name]
            return withHeaders(draft, { [name]: [typeof value === "string" ? value : "x", "other"] })
          })
      )
    case "method":
      return otherMethod.map((method) => ({ ...draft, method }))
  }
}

/** The wire form of a draft for `route`. */
const write = (route: FuzzRoute, kind: RequestKind, draft: Draft): FuzzRequest => {
  const path =
    "" in draft.params
      ? `${route.path}${draft.params[""]}`
      : route.path
          .split("/")
          .map((s) => (s.startsWith(":") ? (draft.params[s.slice(1)] ?? "") : s))
          .join("/")
  const headers = Object.fromEntries(
    Object.entries(draft.headers).filter((e): e is [string, string | ReadonlyArray<string>] => e[1] !== undefined)
  )
  const body =
    draft.body === undefined || typeof draft.body === "string" || draft.body instanceof Uint8Array
      ? draft.body
      : toJsonText(draft.body)
  return {
    route: route.key,
    kind,
    method: draft.method,
    path: draft.query === "" ? path : `${path}?${draft.query}`,
    headers,
    chunked: draft.chunked && body !== undefined,
    ...(body === undefined ? {} : { body }),
    ...(draft.unstorable === undefined ? {} : { unstorable: draft.unstorable })
  }
}

const kindWeights: Readonly<Record<RequestKind, number>> = {
  valid: 30,
  field: 16,
  body: 8,
  "content-type": 5,
  path: 10,
  query: 6,
  auth: 9,
  "idempotency-key": 5,
  headers: 4,
  method: 7
}

const applies = (kind: RequestKind, route: FuzzRoute): boolean => {
  switch (kind) {
    case "field":
    case "content-type":
      return route.schemas.payload !== undefined
    case "idempotency-key":
      return route.schemas.headers !== undefined
    default:
      return true
  }
}

/** Any generated request, over every route (routes with a definition drawn three times as often as plain ones). */
export const requestArbitrary = (context: RequestContext): fc.Arbitrary<FuzzRequest> => {
  const weighted = context.routes.flatMap((r) => (r.answers === undefined ? [r] : [r, r, r]))
  return fc.constantFrom(...weighted).chain((route) => {
    const samples = context.samples.get(route.key)!
    const kinds = requestKinds.filter((k) => applies(k, route))
    const queryNames = [...new Set(["cursor", "limit", ...samples.queries.flatMap((q) => Object.keys(q))])]
    return fc
      .tuple(
        fc.oneof(...kinds.map((k) => ({ weight: kindWeights[k], arbitrary: fc.constant(k) }))),
        validDraft(route, samples, context.fixtures)
      )
      .chain(([kind, draft]) =>
        mutate(kind, route, draft, context.fixtures, queryNames).map((d) => write(route, kind, d))
      )
  })
}
