/**
 * The test harness: the whole application in-process (no port), composed by the service's own
 * root (src/app/AppLayer.ts `appLayer`) over the embedded PGlite in memory or, with DATABASE_URL,
 * PostgreSQL, a counted provider and the configured clock. One app builder for every suite, with:
 *
 * - `call` / `admin`: HTTP requests as an integrator or the operator sends them;
 * - `newOrg`: the one organisation factory (operator API: organisation, credits, key);
 * - `calls`: what the service asked the provider (the simulator, counted per message);
 * - `advance` / `advanceTo`: the clock stepper, for an app on the service's own test clock
 *   (`config: { clock: "test" }`, SMS_CLOCK=test, contract section 9): time moves only when a test
 *   advances it, and an advance returns once all work due by then is done, so no test sleeps or
 *   polls for background work. A step that does not finish within its real-time bound fails.
 *   `moveClock` moves it without running any work (as if the background fibers were stopped).
 *   By default an app runs on the system clock without dispatching (HTTP tests); with
 *   `schedulerEnabled: true` its background fibers run for real (concurrency tests);
 * - `run`: an Effect against the app's own services (SqlClient, Ledger, MessageStore...).
 *
 * Background work is global across organisations, so an app that runs it (`label`) gets a
 * PostgreSQL database of its own (test/support/ScratchDatabase.ts); the embedded database is
 * always the app's own.
 */
import { Clock, Context, Duration, Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { appLayer } from "../../src/app/AppLayer.ts"
import { clockLayer, ServiceClock } from "../../src/clock/ServiceClock.ts"
import type { AppConfigShape } from "../../src/config/Config.ts"
import { DueWork } from "../../src/dispatch/DueWork.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import type { Permission } from "../../src/domain/Permissions.ts"
import { Provider } from "../../src/provider/Provider.ts"
import { ProviderLive } from "../../src/provider/ProviderLayer.ts"
import { scratchDatabaseLayer, testDatabaseLayer } from "./ScratchDatabase.ts"

export const adminToken = "test-operator-token-0123456789"

export const allPermissions: ReadonlyArray<Permission> = ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"]

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
  clock: "system",
  otlpEndpoint: undefined, otelServiceName: "sms-service", metricsRecountIntervalMs: 0,
  retentionDays: undefined,
  webhookAllowPrivate: true,
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

/** `makeCaller` over the network: every call goes to the service listening at `base` (`http://127.0.0.1:<port>`). */
export const remoteCaller = (base: string) =>
  makeCaller(async (request) =>
    fetch(request.url.replace("http://test", base), {
      method: request.method,
      headers: request.headers,
      ...(request.method === "GET" ? {} : { body: await request.text() })
    }))

/** A simulated death of the process at a chosen point of a provider call. */
export class SimulatedCrash extends Error {
  readonly simulatedCrash = true
}

/** What the service asked the provider, per message id; and a fault to inject into the next submissions. */
export interface ProviderCalls {
  readonly submits: Map<string, number>
  readonly queries: Map<string, number>
  /** `beforeProvider`: submissions die before reaching the provider; `afterProvider`: after its answer. */
  fault: "none" | "beforeProvider" | "afterProvider"
}

const bump = (counts: Map<string, number>, id: string) => Effect.sync(() => void counts.set(id, (counts.get(id) ?? 0) + 1))

/** The configured provider (the simulator), every call counted, faults injected on demand. */
const countingProvider = (calls: ProviderCalls) =>
  Layer.effectContext(Effect.gen(function*() {
    const inner = yield* Provider
    return Context.make(Provider, Provider.of({
      ...inner,
      submit: (s) =>
        Effect.suspend(() => {
          const fault = calls.fault
          if (fault === "beforeProvider") return Effect.die(new SimulatedCrash("crash before the provider call"))
          const answer = bump(calls.submits, s.messageId).pipe(Effect.andThen(inner.submit(s)))
          return fault === "afterProvider"
            ? answer.pipe(Effect.andThen(Effect.die(new SimulatedCrash("crash after the provider answered"))))
            : answer
        }),
      query: (q) => bump(calls.queries, q.messageId).pipe(Effect.andThen(inner.query(q)))
    }))
  })).pipe(Layer.provideMerge(ProviderLive))

export interface TestAppOptions {
  /**
   * Names the app's own database on PostgreSQL (`<db>_<label>_<pid>`), needed by an app that runs
   * background work (advances its clock, or runs on the system clock). Without it the app uses
   * DATABASE_URL's database as is, shared with the other suites.
   */
  readonly label?: string
  readonly config?: Partial<AppConfigShape>
}

/** An operator's call: method, path under /admin/v1, JSON body. */
export type AdminCall = (method: string, path: string, body?: unknown) => Promise<Reply>

/**
 * The one organisation factory, over any service's operator API (in-process or a running
 * process): a function that creates an organisation with `credits` (never expiring) and a key
 * holding `permissions` (default: all five).
 */
export const organisationFactory = (admin: AdminCall) =>
async (orgOptions: { credits?: number; permissions?: ReadonlyArray<Permission>; sender?: string } = {}) => {
  const org = await admin("POST", "/organizations", {
    name: "Test org",
    ...(orgOptions.sender === undefined ? {} : { default_sender_name: orgOptions.sender })
  })
  if (org.status !== 201) throw new Error(`cannot create organisation: ${org.status} ${org.text}`)
  const orgId: string = org.body.id
  if ((orgOptions.credits ?? 0) > 0) {
    const grant = await admin("POST", `/organizations/${orgId}/credits`, { amount: orgOptions.credits })
    if (grant.status !== 201) throw new Error(`cannot grant credits: ${grant.status} ${grant.text}`)
  }
  const key = await admin("POST", `/organizations/${orgId}/api-keys`, { permissions: orgOptions.permissions ?? allPermissions })
  if (key.status !== 201) throw new Error(`cannot issue key: ${key.status} ${key.text}`)
  return { orgId, apiKey: key.body.api_key as string, keyId: key.body.key_id as string }
}

/** Longest real time a clock step may take before the test fails. */
const stepTimeoutMs = 60_000

export const makeTestApp = (options: TestAppOptions = {}) => {
  const config = testConfig(options.config)
  const calls: ProviderCalls = { submits: new Map(), queries: new Map(), fault: "none" }

  let captured: Context.Context<never> | undefined
  const Capture = Layer.effectDiscard(Effect.map(Effect.context<never>(), (context) => void (captured = context)))

  const database = options.label === undefined
    ? testDatabaseLayer(config)
    : scratchDatabaseLayer(options.label, config)
  // the service as main.ts composes it (AppLayer.ts), over the test's database, counted provider and clock
  const app = Capture.pipe(
    Layer.provideMerge(appLayer({ config, database, provider: countingProvider(calls), clock: clockLayer(config.clock) })),
    Layer.provide(HttpServer.layerServices)
  )
  const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true })
  const call = makeCaller(handler)

  /** The app's context, once the first request has built it. */
  const context = async (): Promise<Context.Context<never>> => {
    if (captured === undefined) await call("GET", "/health")
    if (captured === undefined) throw new Error("the test app did not start")
    return captured
  }

  /** Runs an effect with the app's services (SqlClient, Ledger, MessageStore, DueWork, the clock...). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the app provides every service of src/
  const run = async <A, E>(effect: Effect.Effect<A, E, any>): Promise<A> =>
    Effect.runPromise(Effect.provideContext(effect as Effect.Effect<A, E, never>, await context()))

  /** The clock's now, in ms. */
  const now = () => run(Clock.currentTimeMillis)

  /** Moves the test clock to `at`, running every piece of work due on the way; fails after `stepTimeoutMs` of real time. */
  const advanceTo = (at: Date | number) =>
    run(Effect.gen(function*() {
      const work = yield* DueWork
      yield* work.advanceTo(new Date(at)).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(stepTimeoutMs),
          orElse: () => Effect.die(new Error(`the clock step to ${new Date(at).toISOString()} did not finish in ${stepTimeoutMs} ms`))
        })
      )
    }))

  /** Moves the test clock `ms` forward (see advanceTo). */
  const advance = async (ms: number) => advanceTo((await now()) + ms)

  /** Moves the test clock `ms` forward without running any work, as if every background fiber were stopped. */
  const moveClock = (ms: number) =>
    run(Effect.gen(function*() {
      const clock = yield* ServiceClock
      yield* clock.set((yield* Clock.currentTimeMillis) + ms)
    }))

  const admin: AdminCall = (method, path, body) =>
    call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })

  const newOrg = organisationFactory(admin)

  /**
   * A message's timeline straight from the store: status changes with their source and time (its
   * rows, or its row once compaction collapsed them).
   */
  const timeline = (orgId: string, messageId: string) =>
    run(Effect.gen(function*() {
      return yield* (yield* MessageStore).timeline(orgId, messageId)
    }))

  return { call, handler, admin, newOrg, run, now, advance, advanceTo, moveClock, timeline, calls, config, dispose: () => dispose() }
}

export type TestApp = ReturnType<typeof makeTestApp>
