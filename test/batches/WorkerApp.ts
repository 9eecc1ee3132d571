/**
 * The whole HTTP application in-process WITH the background workers (dispatcher, verifier,
 * recovery, receipt consumer) running under a TestClock that the test drives. Requests, workers
 * and the provider simulator all read the same TestClock; the database layer is built outside it.
 *
 * The provider simulator is wrapped to count submissions and status queries per message, so a
 * test can prove that nothing was sent twice.
 *
 * The workers dispatch every organisation's due messages, so on PostgreSQL (DATABASE_URL) each app
 * runs on a scratch database of its own (test/support/ScratchDatabase.ts), dropped by `dispose`.
 */
import { Clock, Context, Effect, Layer, Stream } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { AdminToken } from "../../src/admin/AdminToken.ts"
import type { AppConfigShape } from "../../src/Config.ts"
import { Provider } from "../../src/dispatch/Provider.ts"
import { WorkersLive } from "../../src/dispatch/Workers.ts"
import { HttpAppLive } from "../../src/http/Server.ts"
import { ProviderLive, servicesWith } from "../../src/Services.ts"
import { scratchDatabaseLayer } from "../support/ScratchDatabase.ts"
import { adminToken, makeCaller, testConfig } from "../support/TestApp.ts"

/** 2001-01-01T09:00:00Z: where the TestClock starts unless told otherwise. */
const defaultStart = Date.UTC(2001, 0, 1, 9, 0, 0)

export interface ProviderCalls {
  /** messageId -> number of `submit` calls */
  readonly submits: Map<string, number>
  /** messageId -> number of `status` calls (verification) */
  readonly statusQueries: Map<string, number>
  /** Every delivery receipt the provider emitted, with the virtual and real time of emission. */
  readonly receipts: Array<{ readonly messageId: string; readonly outcome: string; readonly at: number; readonly realAt: number }>
}

const bump = (map: Map<string, number>, id: string) => map.set(id, (map.get(id) ?? 0) + 1)

/** The configured provider (the simulator), with every call counted. */
const countingProvider = (calls: ProviderCalls) =>
  Layer.effect(Provider, Effect.gen(function*() {
    const inner = yield* Provider
    return Provider.of({
      submit: (s) => Effect.sync(() => bump(calls.submits, s.messageId)).pipe(Effect.andThen(inner.submit(s))),
      status: (s) => Effect.sync(() => bump(calls.statusQueries, s.messageId)).pipe(Effect.andThen(inner.status(s))),
      receipts: inner.receipts.pipe(Stream.tap((r) =>
        Effect.sync(() => {
          calls.receipts.push({ messageId: r.messageId, outcome: r.outcome, at: r.at.getTime(), realAt: Date.now() })
        })
      ))
    })
  })).pipe(Layer.provide(ProviderLive))

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface RunUntilOptions {
  /** Virtual milliseconds per clock step (default 200). */
  readonly stepMs?: number
  /** Real milliseconds to let the database work between steps (default 15). */
  readonly pauseMs?: number
  /** Give up after this many real milliseconds (default 40 s). */
  readonly timeoutMs?: number
}

export interface WorkerAppOptions {
  /** Names the app's scratch database on PostgreSQL (`<db>_<label>_<pid>`): one label per test file. */
  readonly label: string
  readonly start?: number
  readonly config?: Partial<AppConfigShape>
}

export const makeWorkerApp = async (options: WorkerAppOptions) => {
  const config = testConfig({ schedulerEnabled: true, ...options.config })
  const calls: ProviderCalls = { submits: new Map(), statusQueries: new Map(), receipts: [] }

  let captured: Context.Context<never> | undefined
  const Capture = Layer.effectDiscard(Effect.context<never>().pipe(Effect.map((context) => {
    captured = context
  })))

  const app = Layer.merge(HttpAppLive, Capture).pipe(
    Layer.provideMerge(WorkersLive),
    Layer.provideMerge(AdminToken.layer),
    Layer.provideMerge(servicesWith(countingProvider(calls))),
    // everything above reads this clock; the database and configuration below it keep the live one
    Layer.provideMerge(TestClock.layer()),
    Layer.provideMerge(scratchDatabaseLayer(options.label, config)),
    Layer.provide(HttpServer.layerServices)
  )
  const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true })

  const call = makeCaller(handler)

  // the first request waits for the layer to be built
  const health = await call("GET", "/api/sms/v2/balance/")
  if (health.status !== 401) throw new Error(`worker app did not start: ${health.status} ${health.text}`)
  if (captured === undefined) throw new Error("worker app context not captured")
  const context = captured

  /** Runs an effect with the app's services (SqlClient, Ledger, MessageStore, the TestClock...). */
  const run = <A, E>(effect: Effect.Effect<A, E, any>): Promise<A> =>
    Effect.runPromise(Effect.provideContext(effect as Effect.Effect<A, E, never>, context))

  const testClock = Context.get(context, Clock.Clock) as unknown as TestClock.TestClock
  /** Moves the TestClock forward, waking every sleep due by then (workers, simulator timers). */
  const advance = (ms: number) => run(testClock.adjust(ms))
  const setTime = (ms: number) => run(testClock.setTime(ms))
  const now = () => testClock.currentTimeMillisUnsafe()
  await setTime(options.start ?? defaultStart)

  /**
   * Steps the clock until `condition` holds, letting the database work in real time between steps.
   * The clock runs at most about stepMs / pauseMs times faster than real time, so a claimed message
   * is settled long before recovery (60 s of virtual time) could take it for a dead process's.
   */
  const runUntil = async (condition: () => Promise<boolean>, runOptions: RunUntilOptions = {}) => {
    const stepMs = runOptions.stepMs ?? 200
    const pauseMs = runOptions.pauseMs ?? 15
    const deadline = Date.now() + (runOptions.timeoutMs ?? 40_000)
    for (;;) {
      if (await condition()) return
      if (Date.now() > deadline) return
      await advance(stepMs)
      await realSleep(pauseMs)
    }
  }

  const admin = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })

  const newOrg = async (orgOptions: { credits?: number; sender?: string } = {}) => {
    const org = await admin("POST", "/organizations", {
      name: "Batch worker test org",
      ...(orgOptions.sender === undefined ? {} : { default_sender_name: orgOptions.sender })
    })
    if (org.status !== 201) throw new Error(`cannot create organisation: ${org.status} ${org.text}`)
    const orgId: string = org.body.id
    if ((orgOptions.credits ?? 0) > 0) {
      const grant = await admin("POST", `/organizations/${orgId}/credits`, { amount: orgOptions.credits })
      if (grant.status !== 201) throw new Error(`cannot grant credits: ${grant.status} ${grant.text}`)
    }
    const key = await admin("POST", `/organizations/${orgId}/api-keys`, {
      permissions: ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"]
    })
    if (key.status !== 201) throw new Error(`cannot issue key: ${key.status} ${key.text}`)
    return { orgId, apiKey: key.body.api_key as string }
  }

  /** Every member of a batch straight from the store: position order, status, timeline length. */
  const members = (orgId: string, batchId: string) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ id: string; position: number; toNumber: string; status: string; events: number }>`SELECT
          m.id::text AS id, m.batch_position AS position, m.to_number, m.status,
          (SELECT count(*) FROM message_events e WHERE e.organisation_id = m.organisation_id AND e.message_id = m.id)::integer AS events
        FROM messages m WHERE m.organisation_id = ${orgId} AND m.batch_id = ${batchId}
        ORDER BY m.batch_position`
    }))

  /** A message's timeline (status changes with source and virtual time). */
  const timeline = (orgId: string, messageId: string) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ fromStatus: string | null; toStatus: string; source: string; at: Date }>`SELECT
          from_status, to_status, source, at FROM message_events
        WHERE organisation_id = ${orgId} AND message_id = ${messageId} ORDER BY id`
    }))

  return {
    call,
    timeline,
    admin,
    newOrg,
    run,
    advance,
    now,
    runUntil,
    members,
    calls,
    config,
    dispose: () => dispose()
  }
}

export type WorkerApp = Awaited<ReturnType<typeof makeWorkerApp>>
