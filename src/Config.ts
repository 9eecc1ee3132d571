/**
 * Every environment variable the service reads, decoded once at start. A bad value stops the
 * start with one line naming the variable (contract section 1).
 */
import { Context, Layer, Redacted } from "effect"

export type LogLevelName = "debug" | "info" | "warn" | "error"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly databaseUrl: Redacted.Redacted<string> | undefined
  /** Directory of the embedded database, or `memory://` to keep nothing. */
  readonly dataDir: string
  /** Operator token; undefined means "generate one at start and print it". */
  readonly adminToken: Redacted.Redacted<string> | undefined
  readonly provider: "simulator"
  readonly simulatorReceiptDelayMs: number
  readonly simulatorSlowMs: number
  readonly verifyIntervalMs: number
  readonly schedulerEnabled: boolean
  readonly logLevel: LogLevelName
  /** `test`: the service's clock moves only through the operator API (contract section 9). */
  readonly clock: "system" | "test"
  /** OTLP/HTTP collector base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`); undefined means no trace is exported. */
  readonly otlpEndpoint: string | undefined
  /** `service.name` of the exported traces. */
  readonly otelServiceName: string
  /** How old, at most, /metrics' counts of messages in final statuses may be (recounting reads every message). */
  readonly metricsRecountIntervalMs: number
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("sms/AppConfig") {}

type Env = Readonly<Record<string, string | undefined>>
type Field<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly line: string }

const present = (env: Env, name: string): string | undefined => {
  const raw = env[name]
  return raw === undefined || raw.trim() === "" ? undefined : raw.trim()
}

const integer = (env: Env, name: string, fallback: number, min: number, max: number): Field<number> => {
  const raw = present(env, name)
  if (raw === undefined) return { ok: true, value: fallback }
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isSafeInteger(n) && n >= min && n <= max
    ? { ok: true, value: n }
    : { ok: false, line: `${name} must be an integer from ${min} to ${max} (got "${raw}")` }
}

const oneOf = <const A extends string>(env: Env, name: string, fallback: A, allowed: ReadonlyArray<A>): Field<A> => {
  const raw = present(env, name)
  if (raw === undefined) return { ok: true, value: fallback }
  const found = allowed.find((a) => a === raw.toLowerCase())
  return found !== undefined
    ? { ok: true, value: found }
    : { ok: false, line: `${name} must be one of ${allowed.join(", ")} (got "${raw}")` }
}

const boolean = (env: Env, name: string, fallback: boolean): Field<boolean> => {
  const raw = oneOf(env, name, fallback ? "true" : "false", ["true", "false", "1", "0", "yes", "no"])
  return raw.ok ? { ok: true, value: ["true", "1", "yes"].includes(raw.value) } : raw
}

const databaseUrl = (env: Env): Field<Redacted.Redacted<string> | undefined> => {
  const raw = present(env, "DATABASE_URL")
  if (raw === undefined) return { ok: true, value: undefined }
  return /^postgres(ql)?:\/\/\S+$/.test(raw)
    ? { ok: true, value: Redacted.make(raw) }
    : { ok: false, line: "DATABASE_URL must be a postgres:// or postgresql:// connection string" }
}

const adminToken = (env: Env): Field<Redacted.Redacted<string> | undefined> => {
  const raw = present(env, "SMS_ADMIN_TOKEN")
  if (raw === undefined) return { ok: true, value: undefined }
  return raw.length >= 16 && /^[!-~]+$/.test(raw)
    ? { ok: true, value: Redacted.make(raw) }
    : { ok: false, line: "SMS_ADMIN_TOKEN must be at least 16 visible ASCII characters" }
}

const otlpEndpoint = (env: Env): Field<string | undefined> => {
  const raw = present(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
  if (raw === undefined) return { ok: true, value: undefined }
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  // the value is not echoed: it may carry credentials
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === ""
    ? { ok: true, value: raw.replace(/\/+$/, "") }
    : { ok: false, line: "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// base URL without query (traces go to <endpoint>/v1/traces)" }
}

const serviceName = (env: Env): Field<string> => {
  const raw = present(env, "OTEL_SERVICE_NAME")
  if (raw === undefined) return { ok: true, value: "sms-service" }
  return raw.length <= 255 && /^[\x20-\x7e]+$/.test(raw)
    ? { ok: true, value: raw }
    : { ok: false, line: "OTEL_SERVICE_NAME must be at most 255 printable ASCII characters" }
}

/** Decodes the environment; on failure returns one line per bad variable. */
export const decodeConfig = (env: Env): { readonly ok: true; readonly config: AppConfigShape } | {
  readonly ok: false
  readonly errors: ReadonlyArray<string>
} => {
  const fields = {
    port: integer(env, "PORT", 8080, 1, 65535),
    host: { ok: true, value: present(env, "HOST") ?? "127.0.0.1" } as Field<string>,
    databaseUrl: databaseUrl(env),
    dataDir: { ok: true, value: present(env, "SMS_DATA_DIR") ?? "./.data" } as Field<string>,
    adminToken: adminToken(env),
    provider: oneOf(env, "SMS_PROVIDER", "simulator", ["simulator"]),
    simulatorReceiptDelayMs: integer(env, "SMS_SIMULATOR_RECEIPT_DELAY_MS", 2000, 0, 86_400_000),
    simulatorSlowMs: integer(env, "SMS_SIMULATOR_SLOW_MS", 3000, 0, 600_000),
    verifyIntervalMs: integer(env, "SMS_VERIFY_INTERVAL_MS", 5000, 10, 86_400_000),
    schedulerEnabled: boolean(env, "SMS_SCHEDULER_ENABLED", true),
    logLevel: oneOf(env, "LOG_LEVEL", "info", ["debug", "info", "warn", "error"]),
    clock: oneOf(env, "SMS_CLOCK", "system", ["system", "test"]),
    otlpEndpoint: otlpEndpoint(env),
    otelServiceName: serviceName(env),
    metricsRecountIntervalMs: integer(env, "SMS_METRICS_RECOUNT_INTERVAL_MS", 300_000, 0, 86_400_000)
  }
  const errors = Object.values(fields).flatMap((f) => (f.ok ? [] : [f.line]))
  if (errors.length > 0) return { ok: false, errors }
  const value = <A>(f: Field<A>): A => (f as { readonly value: A }).value
  return {
    ok: true,
    config: {
      port: value(fields.port),
      host: value(fields.host),
      databaseUrl: value(fields.databaseUrl),
      dataDir: value(fields.dataDir),
      adminToken: value(fields.adminToken),
      provider: value(fields.provider),
      simulatorReceiptDelayMs: value(fields.simulatorReceiptDelayMs),
      simulatorSlowMs: value(fields.simulatorSlowMs),
      verifyIntervalMs: value(fields.verifyIntervalMs),
      schedulerEnabled: value(fields.schedulerEnabled),
      logLevel: value(fields.logLevel),
      clock: value(fields.clock),
      otlpEndpoint: value(fields.otlpEndpoint),
      otelServiceName: value(fields.otelServiceName),
      metricsRecountIntervalMs: value(fields.metricsRecountIntervalMs)
    }
  }
}

/** The configuration as a layer, for tests and tools that build it from values. */
export const layerConfig = (config: AppConfigShape) => Layer.succeed(AppConfig, config)
