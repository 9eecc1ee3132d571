/**
 * The SMPP variables (contract sections 1 and 8): one SMSC by `SMS_SMPP_URL`, or several by the
 * routing file `SMS_PROVIDERS_FILE`, plus the response deadline, window, MPS cap and id kind.
 * Every problem is one line naming the variable; a password is never echoed.
 */
import { Result, Schema, SchemaIssue, SchemaParser } from "effect"
import { type Env, integer, oneOf, present, valueOf } from "../../EnvFields.ts"
import { parseSmppUrl } from "./SmppUrl.ts"
import { defaultTiming, msgIdTypes, type RouteSettings, singleRouteName, type SmppSettings } from "./SmppSettings.ts"

export type Decoded<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly errors: ReadonlyArray<string> }

const RouteEntry = Schema.Struct({
  name: Schema.String.check(
    Schema.isPattern(/^[a-z0-9_-]{1,32}$/, { message: "must be 1 to 32 lower-case letters, digits, - or _" })
  ),
  smpp_url: Schema.String,
  prefixes: Schema.Array(
    Schema.String.check(Schema.isPattern(/^(\*|\+[0-9]{1,15})$/, { message: "must be \"*\" or \"+\" followed by digits" }))
  ).check(Schema.isMinLength(1, { message: "must list at least one prefix" })),
  window: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
  mps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 }))),
  msg_id_type: Schema.optionalKey(Schema.Literals(msgIdTypes))
})
type RouteEntry = typeof RouteEntry.Type

const RoutesFile = Schema.Array(RouteEntry).check(Schema.isMinLength(1, { message: "must list at least one SMSC" }))

const decodeRoutesFile = SchemaParser.decodeUnknownResult(RoutesFile, { onExcessProperty: "error", errors: "all" })
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
  const name = typeof entry === "object" && entry !== null && typeof (entry as { name?: unknown }).name === "string"
    ? ` (${(entry as { name: string }).name})`
    : ""
  const label = typeof index === "number" ? `entry ${index + 1}${name}` : String(index)
  return rest.length === 0 ? label : `${label} ${rest.map(String).join(".")}`
}

/** The routes of a routing file's JSON text, or one line per problem (without the variable's name). */
export const decodeRoutes = (json: string, defaults: Pick<RouteSettings, "window" | "mps" | "msgIdType">): Decoded<ReadonlyArray<RouteSettings>> => {
  let input: unknown
  try {
    input = JSON.parse(json)
  } catch (e) {
    // the parser's message may quote the text, which holds passwords: only its position is kept
    const at = /\(line \d+ column \d+\)|position \d+/.exec(e instanceof Error ? e.message : "")
    return { ok: false, errors: [`the file: is not JSON${at === null ? "" : ` (${at[0].replace(/[()]/g, "")})`}`] }
  }
  const decoded = decodeRoutesFile(input)
  if (Result.isFailure(decoded)) {
    return {
      ok: false,
      errors: formatIssue(decoded.failure).issues.map((i) =>
        `${where(input, (i.path ?? []).map((p) => (typeof p === "object" && p !== null ? p.key : p)))}: ${friendly(i.message)}`
      )
    }
  }
  const errors: Array<string> = []
  const routes: Array<RouteSettings> = []
  const servedBy = new Map<string, string>()
  decoded.success.forEach((entry: RouteEntry, i) => {
    const label = `entry ${i + 1} (${entry.name})`
    if (decoded.success.slice(0, i).some((other) => other.name === entry.name)) errors.push(`${label} name: already used by another entry`)
    for (const prefix of entry.prefixes) {
      const other = servedBy.get(prefix)
      if (other !== undefined) errors.push(`${label} prefixes: ${prefix} is already served by ${other}`)
      else servedBy.set(prefix, entry.name)
    }
    const url = parseSmppUrl(entry.smpp_url)
    if (!url.ok) errors.push(`${label} smpp_url: ${url.why}`)
    else {
      routes.push({
        name: entry.name,
        endpoint: url.endpoint,
        prefixes: entry.prefixes,
        window: entry.window ?? defaults.window,
        mps: entry.mps ?? defaults.mps,
        msgIdType: entry.msg_id_type ?? defaults.msgIdType
      })
    }
  })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: routes }
}

/**
 * The SMPP settings when `provider` is smpp (undefined for the simulator), or one line per
 * problem. The URL and the file are refused with the simulator: a deployment that names a real
 * SMSC but forgot SMS_PROVIDER=smpp would otherwise answer "delivered" for messages never sent.
 * The tuning variables are checked whatever the provider and only used with smpp.
 */
export const decodeSmppSettings = (
  env: Env,
  provider: "simulator" | "smpp",
  readText: (path: string) => string
): Decoded<SmppSettings | undefined> => {
  const tuning = {
    responseTimeoutMs: integer(env, "SMS_SMPP_RESPONSE_TIMEOUT_MS", 10_000, 100, 600_000),
    window: integer(env, "SMS_SMPP_WINDOW", 10, 1, 1000),
    mps: integer(env, "SMS_SMPP_MPS", 0, 0, 100_000),
    msgIdType: oneOf(env, "SMS_SMPP_MSG_ID_TYPE", "exact", msgIdTypes)
  }
  const tuningErrors = Object.values(tuning).flatMap((f) => (f.ok ? [] : [f.line]))
  const url = present(env, "SMS_SMPP_URL")
  const file = present(env, "SMS_PROVIDERS_FILE")

  if (provider === "simulator") {
    const named = url !== undefined ? "SMS_SMPP_URL" : file !== undefined ? "SMS_PROVIDERS_FILE" : undefined
    const refused = named === undefined
      ? []
      : [`${named} is set but SMS_PROVIDER is simulator: set SMS_PROVIDER=smpp to send through SMPP, or unset ${named}`]
    const errors = [...tuningErrors, ...refused]
    return errors.length > 0 ? { ok: false, errors } : { ok: true, value: undefined }
  }
  if (url === undefined && file === undefined) {
    return { ok: false, errors: [...tuningErrors, "SMS_PROVIDER=smpp needs SMS_SMPP_URL (one SMSC) or SMS_PROVIDERS_FILE (several)"] }
  }
  if (url !== undefined && file !== undefined) {
    return { ok: false, errors: [...tuningErrors, "SMS_SMPP_URL and SMS_PROVIDERS_FILE exclude each other: set only one"] }
  }
  if (tuningErrors.length > 0) return { ok: false, errors: tuningErrors }
  const defaults = { window: valueOf(tuning.window), mps: valueOf(tuning.mps), msgIdType: valueOf(tuning.msgIdType) }

  let routes: Decoded<ReadonlyArray<RouteSettings>>
  if (url !== undefined) {
    const parsed = parseSmppUrl(url)
    routes = parsed.ok
      ? { ok: true, value: [{ name: singleRouteName, endpoint: parsed.endpoint, prefixes: ["*"], ...defaults }] }
      : { ok: false, errors: [`SMS_SMPP_URL ${parsed.why}`] }
  } else {
    let json: string
    try {
      json = readText(file!)
    } catch (e) {
      const code = typeof e === "object" && e !== null && "code" in e ? String(e.code) : String(e)
      return { ok: false, errors: [`SMS_PROVIDERS_FILE cannot be read (${file}): ${code}`] }
    }
    const decoded = decodeRoutes(json, defaults)
    routes = decoded.ok ? decoded : { ok: false, errors: decoded.errors.map((line) => `SMS_PROVIDERS_FILE (${file}): ${line}`) }
  }
  return routes.ok
    ? { ok: true, value: { routes: routes.value, responseTimeoutMs: valueOf(tuning.responseTimeoutMs), timing: defaultTiming } }
    : routes
}
