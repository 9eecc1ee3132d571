/**
 * The whole HTTP application in-process (no port) over a fresh database: the embedded PGlite
 * in memory, or the PostgreSQL of `DATABASE_URL` when set (tests then isolate themselves by
 * creating their own organisations).
 */
import { Layer, Redacted } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { AdminToken } from "../../src/admin/AdminToken.ts"
import { type AppConfigShape, layerConfig } from "../../src/Config.ts"
import { DatabaseLive } from "../../src/db/Database.ts"
import type { Permission } from "../../src/domain/Permissions.ts"
import { HttpAppLive } from "../../src/http/Server.ts"
import { ServicesLive } from "../../src/Services.ts"

export const adminToken = "test-operator-token-0123456789"

export const testConfig = (overrides: Partial<AppConfigShape> = {}): AppConfigShape => ({
  port: 0,
  host: "127.0.0.1",
  databaseUrl: process.env.DATABASE_URL ? Redacted.make(process.env.DATABASE_URL) : undefined,
  dataDir: "memory://",
  adminToken: Redacted.make(adminToken),
  provider: "simulator",
  smpp: undefined,
  simulatorReceiptDelayMs: 2000,
  simulatorSlowMs: 3000,
  verifyIntervalMs: 5000,
  schedulerEnabled: false,
  logLevel: "error",
  ...overrides
})

/** Which database the suite runs on, for test names. */
export const backend = process.env.DATABASE_URL ? "PostgreSQL" : "embedded PGlite"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience: bodies are asserted field by field
  readonly body: any
}

export interface CallOptions {
  readonly body?: unknown
  /** A raw body, sent as is (for malformed JSON). */
  readonly raw?: string
  readonly headers?: Record<string, string>
  /** Bearer token; omit for none. */
  readonly token?: string
}

/** Calls a fetch-style handler as a client would: bearer token, JSON body, parsed answer. */
export const makeCaller = (handler: (request: Request) => Promise<Response>) =>
async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
    headers["content-type"] = "application/json"
  }
  const res = await handler(new Request(`http://test${path}`, { method, headers, ...(body === undefined ? {} : { body }) }))
  const text = await res.text()
  let parsed: unknown = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, text, body: parsed }
}

export const makeTestApp = (overrides: Partial<AppConfigShape> = {}) => {
  const config = testConfig(overrides)
  const app = HttpAppLive.pipe(
    Layer.provideMerge(AdminToken.layer),
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(layerConfig(config)),
    Layer.provide(HttpServer.layerServices)
  )
  const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true })

  const call = makeCaller(handler)

  const admin = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })

  /** A new organisation with `credits` (never expiring) and a key holding `permissions` (default: all five). */
  const newOrg = async (options: { credits?: number; permissions?: ReadonlyArray<Permission>; sender?: string } = {}) => {
    const org = await admin("POST", "/organizations", {
      name: "Test org",
      ...(options.sender === undefined ? {} : { default_sender_name: options.sender })
    })
    if (org.status !== 201) throw new Error(`cannot create organisation: ${org.status} ${org.text}`)
    const orgId: string = org.body.id
    if ((options.credits ?? 0) > 0) await admin("POST", `/organizations/${orgId}/credits`, { amount: options.credits })
    const key = await admin("POST", `/organizations/${orgId}/api-keys`, {
      permissions: options.permissions ?? ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"]
    })
    if (key.status !== 201) throw new Error(`cannot issue key: ${key.status} ${key.text}`)
    return { orgId, apiKey: key.body.api_key as string, keyId: key.body.key_id as string }
  }

  return { call, admin, newOrg, dispose, config }
}

export type TestApp = ReturnType<typeof makeTestApp>
