/**
 * The test harness: the whole application in-process (no port), composed by the service's own
 * root (src/app/AppLayer.ts `appLayer`) over the embedded PGlite in memory or, with DATABASE_URL,
 * PostgreSQL, a counted provider and the configured clock. One app for every in-process suite, the
 * `App` service a suite's tests share through @effect/vitest `layer(...)` (`withApp`), with:
 *
 * - `call` / `admin`: HTTP requests as an integrator or the operator sends them;
 * - `newOrg`: the one organisation factory (operator API: organisation, credits, key);
 * - `calls`: what the service asked the provider (the simulator, counted per message);
 * - `advance` / `advanceTo`: the clock stepper, for an app on the service's own test clock
 *   (`config: { clock: "test" }`, SMS_CLOCK=test, docs/decisions.md#the-test-clock): time moves only when a test
 *   advances it, and an advance returns once all work due by then is done, so no test sleeps or
 *   polls for background work. A step that does not finish within its real-time bound fails.
 *   `moveClock` moves it without running any work (as if the background fibers were stopped).
 *   By default an app runs on the system clock without dispatching (HTTP tests); with
 *   `schedulerEnabled: true` its background fibers run for real (concurrency tests);
 * - the app's own services (SqlClient, Ledger, MessageStore...), which a test yields directly.
 *
 * Background work is global across organisations, so an app that runs it (`label`) gets a
 * PostgreSQL database of its own (test/support/ScratchDatabase.ts); the embedded database is
 * always the app's own.
 */
import { afterAll, beforeAll, layer, type Vitest } from "@effect/vitest"
import { Clock, Context, Duration, Effect, Exit, Fiber, Layer, Redacted, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { appLayer } from "../../src/app/AppLayer.ts"
import { clockLayer, ServiceClock } from "../../src/clock/ServiceClock.ts"
import type { AppConfigShape } from "../../src/config/Config.ts"
import { DueWork } from "../../src/dispatch/DueWork.ts"
import type { TimelineEntry } from "../../src/messages/MessageReads.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import type { Permission } from "../../src/domain/Permissions.ts"
import { Provider } from "../../src/provider/Provider.ts"
import { providerLayer } from "../../src/provider/ProviderLayer.ts"
import { scratchDatabaseLayer, testDatabaseLayer } from "./ScratchDatabase.ts"

export const adminToken = "test-operator-token-0123456789"

export const allPermissions: ReadonlyArray<Permission> = [
  "sms.send",
  "sms.schedule",
  "delivery.read",
  "balance.read",
  "contacts.manage"
]

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
  otlpEndpoint: undefined,
  otelServiceName: "sms-service",
  metricsRecountIntervalMs: 0,
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
  // biome-ignore lint/suspicious/noExplicitAny: test convenience: bodies are asserted field by field
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
export const makeCaller =
  (handler: (request: Request) => Promise<Response>) =>
  async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json"
    }
    const res = await handler(
      new Request(`http://test${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
    )
    const text = await res.text()
    let parsed: unknown
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
    })
  )

/** A simulated death of the process at a chosen point of a provider call. */
export class SimulatedCrash extends Error {
  readonly simulatedCrash = true
}

/** What the service asked the provider, per message id; and a fault to inject into the next submissions. */
export interface ProviderCalls {
  readonly submits: Map<string, number>
  readonly queries: Map<string, number>
  /** How many times the service asked which routes it may send to (the dispatcher, at each claim and each empty one). */
  sendables: number
  /** `beforeProvider`: submissions die before reaching the provider; `afterProvider`: after its answer. */
  fault: "none" | "beforeProvider" | "afterProvider"
}

const bump = (counts: Map<string, number>, id: string) =>
  Effect.sync(() => void counts.set(id, (counts.get(id) ?? 0) + 1))

/** The configured provider (the simulator), every call counted, faults injected on demand. */
const countingProvider = (calls: ProviderCalls) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const inner = yield* Provider
      return Context.make(
        Provider,
        Provider.of({
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
          query: (q) => bump(calls.queries, q.messageId).pipe(Effect.andThen(inner.query(q))),
          sendable: () => {
            calls.sendables++
            return inner.sendable()
          }
        })
      )
    })
  ).pipe(Layer.provideMerge(providerLayer))

export interface TestAppOptions {
  /**
   * Names the app's own database on PostgreSQL (`<db>_<label>_<pid>`), required of an app that can
   * run background work (on the test clock, or with `schedulerEnabled`) on DATABASE_URL's database.
   * Without it the app uses DATABASE_URL's database as is, shared with the other suites.
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
export const organisationFactory =
  (admin: AdminCall) =>
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
    const key = await admin("POST", `/organizations/${orgId}/api-keys`, {
      permissions: orgOptions.permissions ?? allPermissions
    })
    if (key.status !== 201) throw new Error(`cannot issue key: ${key.status} ${key.text}`)
    return { orgId, apiKey: key.body.api_key as string, keyId: key.body.key_id as string }
  }

/** Longest real time a clock step may take before the test fails. */
const stepTimeoutMs = 60_000

/**
 * Moves the test clock to `at`, running every piece of work due on the way; fails after
 * `stepTimeoutMs` of real time. An advance cannot be interrupted: it runs in a fiber of its own,
 * and the wait for it is what times out.
 */
const advanceClockTo = (at: Date | number) =>
  Effect.gen(function* () {
    const work = yield* DueWork
    const step = yield* Effect.forkDetach(work.advanceTo(new Date(at)))
    yield* Fiber.join(step).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(stepTimeoutMs),
        orElse: () =>
          Effect.die(new Error(`the clock step to ${new Date(at).toISOString()} did not finish in ${stepTimeoutMs} ms`))
      })
    )
  })

/** Moves the test clock `ms` forward without running any work, as if every background fiber were stopped. */
const moveClockBy = (ms: number) =>
  Effect.gen(function* () {
    const clock = yield* ServiceClock
    yield* clock.set((yield* Clock.currentTimeMillis) + ms)
  })

/** A message's timeline straight from the store (its row, or an upgraded database's rows). */
const timelineOf = (orgId: string, messageId: string) =>
  Effect.flatMap(MessageStore, (store) => store.timeline(orgId, messageId))

/** A new organisation of the app (see `organisationFactory`). */
export interface NewOrg {
  readonly orgId: string
  readonly apiKey: string
  readonly keyId: string
}

/**
 * The app as the tests of one suite see it through @effect/vitest `layer(...)` (`withApp`): HTTP
 * calls as an integrator and as the operator, the organisation factory, the provider's counted
 * calls and the clock stepper, each an Effect. The same layer provides every service of the app
 * (SqlClient, MessageStore, Ledger, DueWork...), so a test yields them directly.
 */
export class App extends Context.Service<
  App,
  {
    /** A request as a client sends it (bearer token, JSON body), answered in-process. */
    readonly call: (method: string, path: string, options?: CallOptions) => Effect.Effect<Reply>
    /** An operator's request: method, path under /admin/v1, JSON body. */
    readonly admin: (method: string, path: string, body?: unknown) => Effect.Effect<Reply>
    /** An organisation with `credits` (never expiring) and a key holding `permissions` (default: all five). */
    readonly newOrg: (options?: {
      credits?: number
      permissions?: ReadonlyArray<Permission>
      sender?: string
    }) => Effect.Effect<NewOrg>
    /** The service clock's now, in ms. */
    readonly now: Effect.Effect<number>
    /** Moves the test clock `ms` forward, running every piece of work due on the way (see `advanceTo`). */
    readonly advance: (ms: number) => Effect.Effect<void>
    /** Moves the test clock to `at`, running every piece of work due on the way; fails after a minute of real time. */
    readonly advanceTo: (at: Date | number) => Effect.Effect<void>
    /** Moves the test clock `ms` forward without running any work, as if every background fiber were stopped. */
    readonly moveClock: (ms: number) => Effect.Effect<void>
    /** A message's status changes with their source and time, from the store. */
    readonly timeline: (orgId: string, messageId: string) => Effect.Effect<ReadonlyArray<TimelineEntry>>
    /** What the service asked the provider, per message id; and the fault to inject into the next submissions. */
    readonly calls: ProviderCalls
    readonly config: AppConfigShape
    /** The fetch-style handler, for requests `call` cannot make. */
    readonly handler: (request: Request) => Promise<Response>
  }
>()("test/App") {
  /** The app of `options` with its services, built before a suite's first test and disposed after its last. */
  static readonly layer = (options: TestAppOptions = {}) =>
    Layer.effectContext(
      Effect.gen(function* () {
        const config = testConfig(options.config)
        // background work is global across organisations: on the database the other suites share,
        // it would dispatch, verify or recover their messages (a flaky failure far from its cause)
        const sharesTheTestDatabase =
          options.label === undefined &&
          config.databaseUrl !== undefined &&
          Redacted.value(config.databaseUrl) === process.env.DATABASE_URL
        if (sharesTheTestDatabase && (config.clock === "test" || config.schedulerEnabled)) {
          return yield* Effect.die(
            new Error(
              "an app on the test clock or with the scheduler runs background work: give it a label (its own database)"
            )
          )
        }
        const calls: ProviderCalls = { submits: new Map(), queries: new Map(), sendables: 0, fault: "none" }
        let captured: Context.Context<never> | undefined
        const Capture = Layer.effectDiscard(
          Effect.map(Effect.context<never>(), (context) => {
            captured = context
          })
        )
        const database =
          options.label === undefined ? testDatabaseLayer(config) : scratchDatabaseLayer(options.label, config)
        // the service as main.ts composes it (AppLayer.ts `mainLayer`), over the test's database, counted provider and clock
        const web = yield* Effect.acquireRelease(
          Effect.sync(() =>
            HttpRouter.toWebHandler(
              Capture.pipe(
                Layer.provideMerge(
                  appLayer({ config, database, provider: countingProvider(calls), clock: clockLayer(config.clock) })
                ),
                Layer.provide(HttpServer.layerServices)
              ),
              { disableLogger: true }
            )
          ),
          (web) => Effect.promise(() => web.dispose())
        )
        const call = makeCaller(web.handler)
        const admin: AdminCall = (method, path, body) =>
          call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })
        const newOrg = organisationFactory(admin)
        // the first request builds the app, and with it the context its services are read from
        yield* Effect.promise(() => call("GET", "/health"))
        if (captured === undefined) return yield* Effect.die(new Error("the test app did not start"))
        const context = captured as Context.Context<AppServices>
        const inApp = <A, E>(effect: Effect.Effect<A, E, AppServices>) => Effect.provideContext(effect, context)
        const now = inApp(Clock.currentTimeMillis)
        // a database failure in a test's own step is the test's failure (a defect), not a value to handle
        const advanceTo = (at: Date | number) => inApp(advanceClockTo(at)).pipe(Effect.orDie)
        const app = App.of({
          call: (method, path, callOptions) => Effect.promise(() => call(method, path, callOptions)),
          admin: (method, path, body) => Effect.promise(() => admin(method, path, body)),
          newOrg: (orgOptions) => Effect.promise(() => newOrg(orgOptions)),
          now,
          advance: (ms) => Effect.flatMap(now, (at) => advanceTo(at + ms)),
          advanceTo,
          moveClock: (ms) => inApp(moveClockBy(ms)),
          timeline: (orgId, messageId) => inApp(timelineOf(orgId, messageId)).pipe(Effect.orDie),
          calls,
          config,
          handler: web.handler
        })
        return Context.add(context, App, app)
      })
    )
}

/** Every service the app provides (what `appLayer` builds). */
export type AppServices = Layer.Success<ReturnType<typeof appLayer>>

/** The tests of a withApp block, given its `it`. */
type Suite = (it: Vitest.MethodsNonLive<App | AppServices>) => void

/**
 * @effect/vitest `layer(...)` over the app of `options`: the suite's tests (`it.effect`) share one
 * app, on the real clock of the test runner (the app's own clock is the service's: `App.now`).
 * `options` may be an Effect, run when the app is built (for a configuration known only then: the
 * ports of SMSCs a suite starts first); `setup` runs once the app is built, before the first test
 * (what a suite's `beforeAll` did with the app).
 *
 * Named, the block is a describe that builds the app before its first test. Anonymous (for
 * describes that share one app), it builds the app in a `beforeAll` of the suite it stands in, so
 * that the app and its setup are there before any test of its describes (@effect/vitest alone
 * builds it at the first `it.effect`), and a nested `it.layer` finds it built; the app is disposed
 * after the suite's last test.
 */
export const withApp = (
  options: TestAppOptions | Effect.Effect<TestAppOptions, unknown> = {},
  setup?: Effect.Effect<unknown, unknown, App | AppServices>
) => {
  const app = Effect.isEffect(options) ? Layer.unwrap(Effect.map(options, (o) => App.layer(o))) : App.layer(options)
  const suite = setup === undefined ? app : Layer.provideMerge(Layer.effectDiscard(setup), app)
  const memoMap = Layer.makeMemoMapUnsafe()
  const block = layer(suite, { excludeTestServices: true, timeout: "2 minutes", memoMap })
  function withAppBlock(f: Suite): void
  function withAppBlock(name: string, f: Suite): void
  function withAppBlock(...args: [Suite] | [string, Suite]): void {
    if (args.length === 2) return block(args[0], args[1])
    // built once in the block's memo map: the block's own build (and any nested it.layer) finds it there
    const scope = Scope.makeUnsafe()
    beforeAll(
      () => Effect.runPromise(Layer.buildWithMemoMap(suite, memoMap, scope).pipe(Effect.orDie, Effect.asVoid)),
      blockTimeoutMs
    )
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), blockTimeoutMs)
    return block(args[0])
  }
  return withAppBlock
}

/** How long a block may take to build its app, or to dispose of it. */
const blockTimeoutMs = 120_000
