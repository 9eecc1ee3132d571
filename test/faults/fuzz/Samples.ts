/**
 * Valid-ish request parts drawn from the routes' own schemas with Effect's schema-derived
 * arbitraries (`Arbitrary.schema`; Effect 4 derives them itself, without fast-check), seeded so
 * a run can be replayed: bodies, path parameters, query strings and headers as they go on the
 * wire (encoded). The fuzz's fast-check arbitraries pick from these pools and mutate them.
 */
import { Arbitrary, Effect, Schema } from "effect"
import type { FuzzRoute } from "./Routes.ts"

/** A JSON object as it goes on the wire. */
export type Json = { readonly [key: string]: unknown }

export interface RouteSamples {
  readonly payloads: ReadonlyArray<Json>
  readonly params: ReadonlyArray<Readonly<Record<string, string>>>
  readonly queries: ReadonlyArray<Readonly<Record<string, string>>>
  readonly headers: ReadonlyArray<Readonly<Record<string, string>>>
  /** The JSON Schema `format` of each top-level body field that has one (`date-time`, `date`). */
  readonly formats: ReadonlyMap<string, string>
}

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** `count` values of `schema`'s encoded (wire) side, generated from its decoded side with `seed`. */
const sample = (schema: Schema.Top, count: number, seed: number): ReadonlyArray<Json> => {
  const values = Effect.runSync(Arbitrary.sampleEffect(Arbitrary.schema(schema), { count, seed }))
  // a request schema needs no service to encode (Schema.Top does not say so)
  const encode = Schema.encodeUnknownSync(Schema.toCodecJson(schema) as unknown as Schema.Codec<unknown>)
  return values.map((v) => encode(v)).filter(isObject)
}

const strings = (record: Json): Readonly<Record<string, string>> =>
  Object.fromEntries(Object.entries(record).filter((e): e is [string, string] => typeof e[1] === "string"))

interface JsonSchemaNode {
  readonly $ref?: string
  readonly format?: string
  readonly properties?: Readonly<Record<string, JsonSchemaNode>>
  readonly anyOf?: ReadonlyArray<JsonSchemaNode>
}

/** The `format` of each top-level property of `schema`'s JSON Schema (through a `$ref` and `anyOf` with null). */
const formatsOf = (schema: Schema.Top): ReadonlyMap<string, string> => {
  const document = Schema.toJsonSchemaDocument(schema)
  const definitions = document.definitions as Readonly<Record<string, JsonSchemaNode>>
  const root = document.schema as JsonSchemaNode
  const body = root.$ref === undefined ? root : (definitions[root.$ref.split("/").pop()!] ?? root)
  const formats = new Map<string, string>()
  for (const [field, node] of Object.entries(body.properties ?? {})) {
    const format = node.format ?? node.anyOf?.find((n) => n.format !== undefined)?.format
    if (format !== undefined) formats.set(field, format)
  }
  return formats
}

/** The pools of one route, `count` values of each part its definition has. */
export const routeSamples = (route: FuzzRoute, count: number, seed: number): RouteSamples => {
  const { params, query, headers, payload } = route.schemas
  return {
    payloads: payload === undefined ? [] : sample(payload, count, seed),
    params: params === undefined ? [] : sample(params, count, seed + 1).map(strings),
    queries: query === undefined ? [] : sample(query, count, seed + 2).map(strings),
    headers: headers === undefined ? [] : sample(headers, count, seed + 3).map(strings),
    formats: payload === undefined ? new Map() : formatsOf(payload)
  }
}
