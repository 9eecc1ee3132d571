import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { decodeEnv } from "../support/ConfigEnv.ts"

describe("configuration from the environment", () => {
  it("gives the documented defaults (docs/operators.md#configuration) when nothing is set", () => {
    const decoded = decodeEnv({})
    expect(decoded.ok).toBe(true)
    if (!decoded.ok) return
    const { databaseUrl, adminToken, ...rest } = decoded.config
    expect(databaseUrl).toBeUndefined()
    expect(adminToken).toBeUndefined()
    expect(rest).toEqual({
      port: 8080,
      host: "127.0.0.1",
      dataDir: "./.data",
      provider: "simulator",
      simulatorReceiptDelayMs: 2000,
      simulatorSlowMs: 3000,
      verifyIntervalMs: 5000,
      schedulerEnabled: true,
      logLevel: "info",
      clock: "system",
      otlpEndpoint: undefined,
      otelServiceName: "sms-service",
      metricsRecountIntervalMs: 300_000,
      retentionDays: undefined,
      webhookAllowPrivate: true
    })
  })

  it("reads every variable", () => {
    const decoded = decodeEnv({
      PORT: "9090",
      HOST: "0.0.0.0",
      DATABASE_URL: "postgres://u@db:5432/sms",
      SMS_DATA_DIR: "memory://",
      SMS_ADMIN_TOKEN: "a-long-operator-token",
      SMS_PROVIDER: "simulator",
      SMS_SIMULATOR_RECEIPT_DELAY_MS: "0",
      SMS_SIMULATOR_SLOW_MS: "10",
      SMS_VERIFY_INTERVAL_MS: "100",
      SMS_SCHEDULER_ENABLED: "false",
      LOG_LEVEL: "debug",
      SMS_CLOCK: "test",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/otlp/",
      OTEL_SERVICE_NAME: "sms-service-eu",
      SMS_METRICS_RECOUNT_INTERVAL_MS: "0",
      SMS_RETENTION_DAYS: "30"
    })
    expect(decoded.ok).toBe(true)
    if (!decoded.ok) return
    expect(decoded.config.port).toBe(9090)
    expect(decoded.config.host).toBe("0.0.0.0")
    expect(Redacted.value(decoded.config.databaseUrl!)).toBe("postgres://u@db:5432/sms")
    expect(Redacted.value(decoded.config.adminToken!)).toBe("a-long-operator-token")
    expect(decoded.config.schedulerEnabled).toBe(false)
    expect(decoded.config.logLevel).toBe("debug")
    expect(decoded.config.simulatorReceiptDelayMs).toBe(0)
    expect(decoded.config.clock).toBe("test")
    expect(decoded.config.otlpEndpoint).toBe("https://collector.example:4318/otlp")
    expect(decoded.config.otelServiceName).toBe("sms-service-eu")
    expect(decoded.config.metricsRecountIntervalMs).toBe(0)
    expect(decoded.config.retentionDays).toBe(30)
  })

  it("names each bad variable on one line of its own", () => {
    const decoded = decodeEnv({
      PORT: "80a",
      DATABASE_URL: "mysql://x",
      SMS_ADMIN_TOKEN: "short",
      SMS_PROVIDER: "twilio",
      SMS_SIMULATOR_RECEIPT_DELAY_MS: "-1",
      SMS_SCHEDULER_ENABLED: "maybe",
      LOG_LEVEL: "loud",
      SMS_CLOCK: "frozen",
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
      OTEL_SERVICE_NAME: "sms\u0007service",
      SMS_METRICS_RECOUNT_INTERVAL_MS: "soon",
      SMS_RETENTION_DAYS: "0"
    })
    expect(decoded.ok).toBe(false)
    if (decoded.ok) return
    const names = [
      "PORT",
      "DATABASE_URL",
      "SMS_ADMIN_TOKEN",
      "SMS_PROVIDER",
      "SMS_SIMULATOR_RECEIPT_DELAY_MS",
      "SMS_SCHEDULER_ENABLED",
      "LOG_LEVEL",
      "SMS_CLOCK",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_SERVICE_NAME",
      "SMS_METRICS_RECOUNT_INTERVAL_MS",
      "SMS_RETENTION_DAYS"
    ]
    expect(decoded.errors).toHaveLength(names.length)
    names.forEach((name, i) => {
      expect(decoded.errors[i]).toMatch(new RegExp(`^${name} `))
      expect(decoded.errors[i]).not.toContain("\n")
    })
  })

  it("never echoes a database URL, which may carry a password", () => {
    const decoded = decodeEnv({ DATABASE_URL: "mysql://user:secret@host/db" })
    expect(decoded.ok).toBe(false)
    if (decoded.ok) return
    expect(decoded.errors.join(" ")).not.toContain("secret")
  })

  it("never echoes an OTLP endpoint, which may carry credentials", () => {
    const decoded = decodeEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://user:secret@collector/" })
    expect(decoded.ok).toBe(false)
    if (decoded.ok) return
    expect(decoded.errors).toHaveLength(1)
    expect(decoded.errors[0]).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT /)
    expect(decoded.errors.join(" ")).not.toContain("secret")
  })
})
