/**
 * The background fibers (src/dispatch/Workers.ts) over a real database, under a TestClock.
 *
 * - `sharedDb(label)`: the database (embedded PGlite in memory, or a scratch database next to
 *   DATABASE_URL's) and the configuration, built once per file on the live clock, so the pool's
 *   own timers stay real.
 * - `inWorld(body)`: runs `body` with a fresh TestClock set to a base instant, and under it a fresh
 *   service graph (a simulator wrapped by a `Probe` that counts submissions and status queries and
 *   can inject delivery receipts) with `WorkersLive` forked. The fibers stop when `body` ends.
 *
 * The database answers in real time while the services read the TestClock, so after moving the
 * clock the woken fibers need a moment of real time for their queries: `advance`/`advanceUntil`
 * move the clock in small steps and wait (live) after each one.
 *
 * Time bases: each world starts earlier than the previous one (`nextBase`), from 2001 downwards.
 * The queue queries are global (not per organisation), so a later world never reaches the due,
 * verify or stale times of messages an earlier world of the file left behind; other files never
 * share the database (see `sharedDb`).
 */
import { Effect, Layer, Queue, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { SimulatorLive } from "../../simulator/Simulator.ts"
import type { AppConfigShape } from "../../src/Config.ts"
import { Provider, type Receipt } from "../../src/dispatch/Provider.ts"
import { WorkersLive } from "../../src/dispatch/Workers.ts"
import { countSegments } from "../../src/domain/Segments.ts"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { Messages } from "../../src/messages/Messages.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { Organisations } from "../../src/organisations/Organisations.ts"
import { servicesWith } from "../../src/Services.ts"
import { scratchDatabaseLayer } from "./ScratchDatabase.ts"
import { testConfig } from "./TestApp.ts"

export { backend } from "./TestApp.ts"

export const workersConfig: AppConfigShape = testConfig({
  schedulerEnabled: true,
  simulatorReceiptDelayMs: 2000,
  simulatorSlowMs: 3000,
  verifyIntervalMs: 1000
})

/**
 * The database and configuration shared by a file's worlds (live clock): on PostgreSQL a scratch
 * database of the file's own (see ScratchDatabase.ts), named after `label`.
 */
export const sharedDb = (label: string) => scratchDatabaseLayer(label, workersConfig)

/** Counts what the service asks the provider, and lets a test push receipts of its own. */
export interface Probe {
  readonly submissions: Map<string, number>
  readonly statusQueries: Map<string, number>
  readonly receipts: Queue.Queue<Receipt>
}

const bump = (counts: Map<string, number>, id: string) => Effect.sync(() => counts.set(id, (counts.get(id) ?? 0) + 1))

/** The simulator behind the probe. */
const probedProvider = (probe: Probe) =>
  Layer.effect(Provider, Effect.gen(function*() {
    const inner = yield* Provider
    return Provider.of({
      submit: (s) => bump(probe.submissions, s.messageId).pipe(Effect.andThen(inner.submit(s))),
      status: (s) => bump(probe.statusQueries, s.messageId).pipe(Effect.andThen(inner.status(s))),
      receipts: Stream.merge(inner.receipts, Stream.fromQueue(probe.receipts))
    })
  })).pipe(Layer.provide(SimulatorLive({
    receiptDelayMs: workersConfig.simulatorReceiptDelayMs,
    slowMs: workersConfig.simulatorSlowMs
  })))

let nextBase = Date.UTC(2001, 0, 1, 0, 0, 0)

export interface World {
  readonly probe: Probe
  /** The instant the world's clock started at. */
  readonly base: number
}

/**
 * Runs `body` in a new world: TestClock at a fresh base instant, services and workers built
 * under it (so every fiber they fork reads the TestClock), torn down when `body` ends.
 */
export const inWorld = <A, E, R>(body: (world: World) => Effect.Effect<A, E, R>) => {
  nextBase -= 30 * 86_400_000
  const base = nextBase
  return Effect.gen(function*() {
    yield* TestClock.setTime(base)
    const probe: Probe = { submissions: new Map(), statusQueries: new Map(), receipts: yield* Queue.unbounded<Receipt>() }
    const stack = WorkersLive.pipe(Layer.provideMerge(servicesWith(probedProvider(probe))))
    return yield* body({ probe, base }).pipe(Effect.provide(stack))
  }).pipe(Effect.provide(TestClock.layer()))
}

/** Waits `ms` of real time (the TestClock does not move). */
export const liveSleep = (ms: number) => TestClock.withLive(Effect.sleep(ms))

/** Real time given to the woken fibers after each step of the clock. */
const settleMs = 15

/** Moves the clock `ms` forward in steps of at most `stepMs`, letting the fibers work after each. */
export const advance = (ms: number, stepMs = 500) =>
  Effect.gen(function*() {
    let left = ms
    while (left > 0) {
      const step = Math.min(stepMs, left)
      yield* TestClock.adjust(step)
      yield* liveSleep(settleMs)
      left -= step
    }
  })

/** Moves the clock to the instant `at` (not backwards), in steps. */
export const advanceTo = (at: number, stepMs = 500) =>
  Effect.flatMap(TestClock.testClockWith((c) => Effect.succeed(c.currentTimeMillisUnsafe())), (now) => advance(at - now, stepMs))

/** The TestClock's reading. */
export const clockNow = TestClock.testClockWith((c) => Effect.succeed(c.currentTimeMillisUnsafe()))

/**
 * Moves the clock in steps until `done(read)` holds; fails (with the last reading) when it still
 * does not after `maxMs` of test time.
 */
export const advanceUntil = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  done: (a: A) => boolean,
  options: { readonly maxMs?: number; readonly stepMs?: number; readonly what?: string } = {}
) =>
  Effect.gen(function*() {
    const maxMs = options.maxMs ?? 120_000
    const stepMs = options.stepMs ?? 500
    let spent = 0
    while (true) {
      const value = yield* read
      if (done(value)) return value
      if (spent >= maxMs) {
        return yield* Effect.die(new Error(`${options.what ?? "condition"} not reached after ${maxMs} ms of test time: ${JSON.stringify(value)}`))
      }
      yield* TestClock.adjust(stepMs)
      yield* liveSleep(settleMs)
      spent += stepMs
    }
  })

/** Polls `read` in real time, without moving the clock, until `done` holds (at most `maxRealMs`). */
export const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean, maxRealMs = 5000, what = "condition") =>
  Effect.gen(function*() {
    const started = Date.now()
    while (true) {
      const value = yield* read
      if (done(value)) return value
      if (Date.now() - started > maxRealMs) {
        return yield* Effect.die(new Error(`${what} not reached after ${maxRealMs} ms of real time: ${JSON.stringify(value)}`))
      }
      yield* liveSleep(10)
    }
  })

/** A new organisation (default sender `INFO`) with `credits` never-expiring credits. */
export const newOrg = (credits: number) =>
  Effect.gen(function*() {
    const org = yield* (yield* Organisations).create("Workers test org", "INFO")
    if (credits > 0) yield* (yield* Ledger).grant(org.id, credits, null)
    return org.id
  })

export interface Creation {
  readonly to: string
  readonly text: string
  readonly senderName?: string
  /** Absent: an immediate send (waits for the provider); present: scheduled at this instant. */
  readonly sendAt?: number
  readonly key?: string
}

/** The JSON body the request stands for (what the idempotency fingerprint covers). */
export const bodyOf = (c: Creation) => ({
  to: c.to,
  text: c.text,
  ...(c.senderName === undefined ? {} : { sender_name: c.senderName }),
  ...(c.sendAt === undefined ? {} : { send_at: new Date(c.sendAt).toISOString() })
})

/** Creates a message through Messages.create (as the HTTP handler does); returns its id, the answer and the key. */
export const create = (organisationId: string, c: Creation) =>
  Effect.gen(function*() {
    const messages = yield* Messages
    const idempotency = yield* Idempotency
    const key = c.key ?? `key-${crypto.randomUUID()}`
    const { answer } = yield* messages.create(organisationId, key, idempotency.fingerprint("messages", bodyOf(c)), {
      to: c.to,
      text: c.text,
      senderName: c.senderName,
      segments: countSegments(c.text).segments,
      sendAt: c.sendAt === undefined ? null : new Date(c.sendAt)
    })
    const body = answer.body as { id?: string; message_id?: string }
    const id = body.id ?? body.message_id
    if (id === undefined) return yield* Effect.die(new Error(`no message id in ${JSON.stringify(answer)}`))
    return { id, answer, key }
  })

/** What a replay of the creation under its key answers now (the stored answer), without creating anything. */
export const replay = (organisationId: string, c: Creation & { readonly key: string }) =>
  Effect.gen(function*() {
    const idempotency = yield* Idempotency
    const sql = yield* SqlClient.SqlClient
    return yield* idempotency.claim(organisationId, "messages", c.key, idempotency.fingerprint("messages", bodyOf(c)), {}, new Date(0)).pipe(
      sql.withTransaction
    )
  })

export interface Snapshot {
  readonly status: string
  readonly deliveryTime: number | null
  /** `from>to@source`, oldest first. */
  readonly transitions: ReadonlyArray<string>
  /** Transition instants relative to the world's base, ms. */
  readonly at: ReadonlyArray<number>
}

/** The message's status, delivery time and timeline. */
export const snapshot = (organisationId: string, id: string, base: number) =>
  Effect.gen(function*() {
    const store = yield* MessageStore
    const m = yield* store.find(organisationId, id)
    if (m === undefined) return yield* Effect.die(new Error(`message ${id} not found`))
    const timeline = yield* store.timeline(organisationId, id)
    return {
      status: m.status,
      deliveryTime: m.deliveryTime === null ? null : m.deliveryTime.getTime() - base,
      transitions: timeline.map((t) => `${t.fromStatus ?? "-"}>${t.toStatus}@${t.source}`),
      at: timeline.map((t) => t.at.getTime() - base)
    } satisfies Snapshot
  })

/** The message's status. */
export const statusOf = (organisationId: string, id: string) =>
  Effect.gen(function*() {
    const m = yield* (yield* MessageStore).find(organisationId, id)
    return m?.status
  })

/** The organisation's balance as the API shows it (without valid_until). */
export const balanceOf = (organisationId: string) =>
  Effect.gen(function*() {
    const b = yield* (yield* Ledger).balance(organisationId)
    return { total: b.total, reserved: b.reserved, available: b.available }
  })

/** How many times the verifier has claimed the message. */
export const verifyAttempts = (organisationId: string, id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ verifyAttempts: number }>`SELECT verify_attempts FROM messages
      WHERE organisation_id = ${organisationId} AND id = ${id}`
    return rows[0]?.verifyAttempts ?? -1
  })
