/**
 * The SMPP variables (docs/operators.md#configuration and docs/decisions.md#smpp): one SMSC by `SMS_SMPP_URL`, or several by the
 * routing file `SMS_PROVIDERS_FILE`, plus the response deadline, window, MPS cap and id kind.
 * Every problem is one line naming the variable; a password is never echoed.
 */
import { Effect, Result, Schema, SchemaIssue, SchemaParser } from "effect"
import { every, type Field, integer, InvalidConfig, oneOf, present, refuse } from "./EnvFields.ts"
import { entryName, OneApiEntry, oneApiSettings, prefixList } from "./OneApiConfig.ts"
import type { OneApiRouteSettings } from "./OneApiSettings.ts"
import { parseSmppUrl } from "./SmppUrl.ts"
import {
  defaultTiming,
  maxBinds,
  msgIdTypes,
  type RouteSettings,
  singleRouteName,
  type SmppSettings
} from "./SmppSettings.ts"

/** Reads a file's text (the routing file): the disk in a process, a function in tests. */
export type ReadText = (path: string) => string

type RouteDefaults = Pick<RouteSettings, "window" | "mps" | "binds" | "msgIdType">

const RouteEntry = Schema.Struct({
  type: Schema.optionalKey(Schema.Literal("smpp")),
  name: entryName,
  smpp_url: Schema.String,
  prefixes: prefixList,
  window: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
  mps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 }))),
  binds: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxBinds }))),
  msg_id_type: Schema.optionalKey(Schema.Literals(msgIdTypes)),
  fallback: Schema.optionalKey(entryName)
})
type RouteEntry = typeof RouteEntry.Type

const RoutesFile = Schema.Array(Schema.Unknown).check(Schema.isMinLength(1, { message: "must list at least one SMSC" }))

const strict = { onExcessProperty: "error", errors: "all" } as const
const decodeRoutesFile = SchemaParser.decodeUnknownResult(RoutesFile, strict)
const decodeSmppEntry = SchemaParser.decodeUnknownResult(RouteEntry, strict)
const decodeOneApiEntry = SchemaParser.decodeUnknownResult(OneApiEntry, strict)
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

const friendly = (message: string): string =>
  message === "Missing key"
    ? "is required"
    : message === "Expected no excess property"
      ? "is not a known field"
      : message.replace(/^Expected/, "expected")

/** `entry 2 (orange) prefixes.0`: where in the file a problem is, entries counted from 1. */
const where = (input: unknown, path: ReadonlyArray<PropertyKey>): string => {
  if (path.length === 0) return "the file"
  const [index, ...rest] = path
  const entry = Array.isArray(input) && typeof index === "number" ? (input[index] as unknown) : undefined
  const name =
    typeof entry === "object" && entry !== null && typeof (entry as { name?: unknown }).name === "string"
      ? ` (${(entry as { name: string }).name})`
      : ""
  const label = typeof index === "number" ? `entry ${index + 1}${name}` : String(index)
  return rest.length === 0 ? label : `${label} ${rest.map(String).join(".")}`
}

/** The routes of a routing file: its SMPP routes and its OneAPI routes (docs/operators.md#oneapi-routes). */
export interface FileRoutes {
  readonly smpp: ReadonlyArray<RouteSettings>
  readonly oneapi: ReadonlyArray<OneApiRouteSettings>
}

type DecodedEntry =
  | { readonly kind: "smpp"; readonly entry: RouteEntry }
  | { readonly kind: "oneapi"; readonly entry: OneApiEntry }

/** Each issue of `issue` as a line; a client secret's value is never in one (its schema message may quote it). */
const issueLines = (input: unknown, index: number, issue: SchemaIssue.Issue): ReadonlyArray<string> =>
  formatIssue(issue).issues.map((i) => {
    const path = [index, ...(i.path ?? []).map((p) => (typeof p === "object" && p !== null ? p.key : p))]
    const secret = path[1] === "client_secret" && i.message !== "Missing key"
    return `${where(input, path)}: ${secret ? "must be a non-empty string" : friendly(i.message)}`
  })

/** The routes of a routing file's JSON text, or one line per problem (without the variable's name). */
export const decodeRoutes = (
  json: string,
  defaults: RouteDefaults
): Result.Result<FileRoutes, ReadonlyArray<string>> => {
  let input: unknown
  try {
    input = JSON.parse(json)
  } catch (e) {
    // the parser's message may quote the text, which holds passwords: only its position is kept
    const at = /\(line \d+ column \d+\)|position \d+/.exec(e instanceof Error ? e.message : "")
    return Result.fail([`the file: is not JSON${at === null ? "" : ` (${at[0].replace(/[()]/g, "")})`}`])
  }
  const file = decodeRoutesFile(input)
  if (Result.isFailure(file)) {
    return Result.fail(formatIssue(file.failure).issues.map((i) => `${where(input, [])}: ${friendly(i.message)}`))
  }
  const errors: Array<string> = []
  const entries: Array<DecodedEntry> = []
  file.success.forEach((raw, i) => {
    // an entry's type says which schema it follows; absent, it is an SMSC
    const oneapi = typeof raw === "object" && raw !== null && (raw as { type?: unknown }).type === "oneapi"
    const decoded: Result.Result<DecodedEntry, SchemaIssue.Issue> = oneapi
      ? Result.map(decodeOneApiEntry(raw), (entry) => ({ kind: "oneapi", entry }) as const)
      : Result.map(decodeSmppEntry(raw), (entry) => ({ kind: "smpp", entry }) as const)
    if (Result.isFailure(decoded)) errors.push(...issueLines(input, i, decoded.failure))
    else entries.push(decoded.success)
  })
  if (errors.length > 0) return Result.fail(errors)
  const smpp: Array<RouteSettings> = []
  const oneapi: Array<OneApiRouteSettings> = []
  const servedBy = new Map<string, string>()
  const names = new Set(entries.map((e) => e.entry.name))
  entries.forEach(({ kind, entry }, i) => {
    const label = `entry ${i + 1} (${entry.name})`
    if (entries.slice(0, i).some((other) => other.entry.name === entry.name))
      errors.push(`${label} name: already used by another entry`)
    // prefixes are unique across every entry, whatever its type: one number, one route
    for (const prefix of entry.prefixes) {
      const other = servedBy.get(prefix)
      if (other !== undefined) errors.push(`${label} prefixes: ${prefix} is already served by ${other}`)
      else servedBy.set(prefix, entry.name)
    }
    if (entry.fallback === entry.name) errors.push(`${label} fallback: must name another entry, not itself`)
    else if (entry.fallback !== undefined && !names.has(entry.fallback))
      errors.push(`${label} fallback: names no entry of the file (${entry.fallback})`)
    if (kind === "oneapi") {
      // a message of this route may then have gone to another: asking this one again by its
      // correlator would send it a second time (docs/operators.md#fallback-routes)
      if (entry.fallback !== undefined && entry.verify_by_correlator === true)
        errors.push(`${label} fallback: cannot be combined with verify_by_correlator`)
      oneapi.push(oneApiSettings(entry, defaults.mps))
      return
    }
    const url = parseSmppUrl(entry.smpp_url)
    if (!url.ok) errors.push(`${label} smpp_url: ${url.why}`)
    else {
      smpp.push({
        name: entry.name,
        endpoint: url.endpoint,
        prefixes: entry.prefixes,
        window: entry.window ?? defaults.window,
        mps: entry.mps ?? defaults.mps,
        binds: entry.binds ?? defaults.binds,
        msgIdType: entry.msg_id_type ?? defaults.msgIdType,
        fallback: entry.fallback
      })
    }
  })
  return errors.length > 0 ? Result.fail(errors) : Result.succeed({ smpp, oneapi })
}

/**
 * Where the SMSCs are given: the URL of one or the routing file of several, exactly one of them
 * with smpp; none with the simulator, as a deployment that names a real SMSC but forgot
 * SMS_PROVIDER=smpp would otherwise answer "delivered" for messages never sent.
 */
const source = (
  provider: "simulator" | "smpp"
): Field<{ readonly url: string } | { readonly file: string } | undefined> =>
  Effect.gen(function* () {
    const url = yield* present("SMS_SMPP_URL")
    const file = yield* present("SMS_PROVIDERS_FILE")
    if (provider === "simulator") {
      const named = url !== undefined ? "SMS_SMPP_URL" : file !== undefined ? "SMS_PROVIDERS_FILE" : undefined
      return named === undefined
        ? undefined
        : yield* refuse(
            `${named} is set but SMS_PROVIDER is simulator: set SMS_PROVIDER=smpp to send through SMPP, or unset ${named}`
          )
    }
    if (url !== undefined && file !== undefined)
      return yield* refuse("SMS_SMPP_URL and SMS_PROVIDERS_FILE exclude each other: set only one")
    if (url !== undefined) return { url }
    if (file !== undefined) return { file }
    return yield* refuse("SMS_PROVIDER=smpp needs SMS_SMPP_URL (one SMSC) or SMS_PROVIDERS_FILE (several)")
  })

const singleRoute = (url: string, defaults: RouteDefaults): Field<FileRoutes> => {
  const parsed = parseSmppUrl(url)
  return parsed.ok
    ? Effect.succeed({
        smpp: [{ name: singleRouteName, endpoint: parsed.endpoint, prefixes: ["*"], ...defaults }],
        oneapi: []
      })
    : refuse(`SMS_SMPP_URL ${parsed.why}`)
}

const fileRoutes = (file: string, defaults: RouteDefaults, readText: ReadText): Field<FileRoutes> =>
  Effect.try({
    try: () => readText(file),
    catch: (e) => {
      const code = typeof e === "object" && e !== null && "code" in e ? String(e.code) : String(e)
      return new InvalidConfig({ lines: [`SMS_PROVIDERS_FILE cannot be read (${file}): ${code}`] })
    }
  }).pipe(
    Effect.flatMap((json) =>
      Result.match(decodeRoutes(json, defaults), {
        onSuccess: Effect.succeed,
        onFailure: (lines) => refuse(...lines.map((line) => `SMS_PROVIDERS_FILE (${file}): ${line}`))
      })
    )
  )

/**
 * The SMPP settings when `provider` is smpp (undefined for the simulator), read through the
 * current ConfigProvider. The tuning variables are checked whatever the provider and only used
 * with smpp.
 */
export const decodeSmppSettings = (
  provider: "simulator" | "smpp",
  readText: ReadText
): Field<SmppSettings | undefined> =>
  Effect.gen(function* () {
    const {
      tuning: { responseTimeoutMs, ...defaults },
      smscs
    } = yield* every({
      tuning: every({
        responseTimeoutMs: integer("SMS_SMPP_RESPONSE_TIMEOUT_MS", 10_000, 100, 600_000),
        window: integer("SMS_SMPP_WINDOW", 10, 1, 1000),
        mps: integer("SMS_SMPP_MPS", 0, 0, 100_000),
        binds: integer("SMS_SMPP_BINDS", 1, 1, maxBinds),
        msgIdType: oneOf("SMS_SMPP_MSG_ID_TYPE", "exact", msgIdTypes)
      }),
      smscs: source(provider)
    })
    if (smscs === undefined) return undefined
    const { smpp, oneapi } = yield* "url" in smscs
      ? singleRoute(smscs.url, defaults)
      : fileRoutes(smscs.file, defaults, readText)
    return { routes: smpp, oneapi, responseTimeoutMs, timing: defaultTiming }
  })
