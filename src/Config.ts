/**
 * Every environment variable the service reads, decoded once at start. A bad value stops the
 * start with one line naming the variable (contract section 1).
 */
import { Context, Layer, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { boolean, type Env, type Field, integer, oneOf, present, text, valueOf } from "./EnvFields.ts"
import { decodeSmppSettings } from "./provider/smpp/SmppConfig.ts"
import type { SmppSettings } from "./provider/smpp/SmppSettings.ts"

export type LogLevelName = "debug" | "info" | "warn" | "error"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly databaseUrl: Redacted.Redacted<string> | undefined
  /** Directory of the embedded database, or `memory://` to keep nothing. */
  readonly dataDir: string
  /** Operator token; undefined means "generate one at start and print it". */
  readonly adminToken: Redacted.Redacted<string> | undefined
  readonly provider: "simulator" | "smpp"
  /** The SMSCs and their settings; present exactly when `provider` is smpp. */
  readonly smpp: SmppSettings | undefined
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

/** Decodes the environment (reading the SMPP routing file through `readText`); on failure returns one line per bad variable. */
export const decodeConfig = (env: Env, readText: (path: string) => string = (path) => readFileSync(path, "utf8")): { readonly ok: true; readonly config: AppConfigShape } | {
  readonly ok: false
  readonly errors: ReadonlyArray<string>
} => {
  const fields = {
    port: integer(env, "PORT", 8080, 1, 65535),
    host: text(env, "HOST", "127.0.0.1"),
    databaseUrl: databaseUrl(env),
    dataDir: text(env, "SMS_DATA_DIR", "./.data"),
    adminToken: adminToken(env),
    provider: oneOf(env, "SMS_PROVIDER", "simulator", ["simulator", "smpp"]),
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
  const smpp = fields.provider.ok ? decodeSmppSettings(env, fields.provider.value, readText) : undefined
  // the test clock drives the simulator's time; a real provider keeps its own
  const combination = fields.clock.ok && fields.clock.value === "test" && fields.provider.ok && fields.provider.value !== "simulator"
    ? ["SMS_CLOCK=test works only with SMS_PROVIDER=simulator"]
    : []
  const errors = [
    ...Object.values(fields).flatMap((f) => (f.ok ? [] : [f.line])),
    ...(smpp?.ok === false ? smpp.errors : []),
    ...combination
  ]
  if (errors.length > 0 || smpp === undefined || !smpp.ok) return { ok: false, errors }
  return {
    ok: true,
    config: {
      port: valueOf(fields.port),
      host: valueOf(fields.host),
      databaseUrl: valueOf(fields.databaseUrl),
      dataDir: valueOf(fields.dataDir),
      adminToken: valueOf(fields.adminToken),
      provider: valueOf(fields.provider),
      smpp: smpp.value,
      simulatorReceiptDelayMs: valueOf(fields.simulatorReceiptDelayMs),
      simulatorSlowMs: valueOf(fields.simulatorSlowMs),
      verifyIntervalMs: valueOf(fields.verifyIntervalMs),
      schedulerEnabled: valueOf(fields.schedulerEnabled),
      logLevel: valueOf(fields.logLevel),
      clock: valueOf(fields.clock),
      otlpEndpoint: valueOf(fields.otlpEndpoint),
      otelServiceName: valueOf(fields.otelServiceName),
      metricsRecountIntervalMs: valueOf(fields.metricsRecountIntervalMs)
    }
  }
}

/** The configuration as a layer, for tests and tools that build it from values. */
export const layerConfig = (config: AppConfigShape) => Layer.succeed(AppConfig, config)
