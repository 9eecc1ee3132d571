/**
 * Model-based property test of the message lifecycle (docs/decisions.md#credits).
 *
 * Random sequences of commands run against the real services on one database (the embedded
 * PGlite, or a PostgreSQL database of its own), on the service's test clock, with a fresh
 * organisation per sequence: admissions (immediate or scheduled, simulator test numbers or
 * ordinary ones, 1 or 2 segments), idempotent replays, clock moves (without running any work),
 * credit grants, sender / SMS availability changes, opt-outs and opt-ins of the numbers
 * (docs/two-way.md), and one round at a time of each kind of
 * background work (the WorkSteps service: dispatcher, verifier, receipts, recovery; and the
 * simulator sending the receipts it owes). Crashes are simulated by running only part of a
 * flow under a dead process (a worker id with no lease), leaving the database as it would:
 *
 * - an immediate send: after its admission committed, before it is marked handed over; after
 *   that, before the provider call; after the provider answered, before settlement;
 * - the dispatcher: after claiming due messages (they stay scheduled until the claim's lease
 *   runs out, then any dispatcher takes them again); after starting one, before the provider
 *   call; after the provider answered, before settlement.
 *
 * After every command: each timeline entry is a transition of docs/decisions.md#message-states and the
 * timeline is a chain ending at the current status; each message went to the provider at
 * most once; a message once `unknown` was never submitted again; the ledger invariant holds,
 * a number opted out never reaches the provider after its opt-out committed (a creation to it is
 * refused with validation_error, a message due to it fails at its turn with source `opted_out`);
 * `reserved` is the segments of the scheduled/processing/unknown messages and `consumed` the
 * segments of the accepted/delivered/undeliverable ones, message by message in its pending hold
 * or its consume or release entry.
 * At the end every sequence is drained (the clock advanced with all due work run) and each
 * message must have reached the final state the simulator table (docs/decisions.md#the-provider-simulator) gives for
 * its number and crash history, and its idempotency key must replay, not be stuck.
 *
 * Only the crashing dispatch is a copy (of WorkSteps.dispatch); keep it in step with it.
 * PROPERTY_NUM_RUNS (default 300 with CI, else 60), PROPERTY_MAX_COMMANDS (20) and
 * PROPERTY_STATS=1 (prints how the messages ended, by path) tune a run; PROPERTY_SEED replays
 * the sequences of the seed a failure printed.
 */
import { Cause, Effect, Exit, Option, References } from "effect"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { SimulatorControl } from "../../src/provider/SimulatorControl.ts"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { DueWork } from "../../src/dispatch/DueWork.ts"
import { WorkSteps } from "../../src/dispatch/WorkSteps.ts"
import { utcDay } from "../../src/domain/Dates.ts"
import { canTransition, type MessageStatus } from "../../src/domain/MessageStatus.ts"
import type { Answer } from "../../src/idempotency/Answer.ts"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { Messages, type MessageRequest } from "../../src/messages/Messages.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { claimLeaseMs, MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import { submissionOf } from "../../src/messages/Submitter.ts"
import { Organisations } from "../../src/organisations/Organisations.ts"
import { OptOuts } from "../../src/consent/OptOuts.ts"
import { Provider } from "../../src/provider/Provider.ts"
import { now } from "../../src/clock/Time.ts"
import { App, type AppServices, backend, SimulatedCrash, withApp } from "../support/TestApp.ts"
import { messageCreditsSql } from "../support/Credits.ts"
import { timelineEntriesSql } from "../support/Timelines.ts"

const numRuns = Number(process.env.PROPERTY_NUM_RUNS ?? (process.env.CI ? 300 : 60))
const maxCommands = Number(process.env.PROPERTY_MAX_COMMANDS ?? 20)
const seed = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED)
const dayMs = 86_400_000
const receiptDelayMs = 2_000
const verifyIntervalMs = 5_000
const sender = "PROPTEST"

const submitCount = (messageId: string) => Effect.map(App, (app) => app.calls.submits.get(messageId) ?? 0)

/** Hands a message to a dead process (a worker id with no lease): what a crash in the middle of its work leaves. */
const abandon = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE messages SET worker_id = ${randomUUID()} WHERE id = ANY(${ids}::uuid[])`
  })

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

const ordinaryNumbers = ["+261341234567", "+261329876543"] as const
const simulatorNumbers = Object.values(testNumbers)

/** How a message went through the flow; with its number it decides where the message ends. */
type Path =
  /** Every step ran to completion. */
  | "clean"
  /** Crashed before the provider could have been called and before submitted_at was set. */
  | "neverMarked"
  /** Crashed after submitted_at was set, before the provider call. */
  | "markedNotSent"
  /** Crashed after the provider answered, before settlement. */
  | "sentNotSettled"
  /** Due while SMS was disabled for the organisation. */
  | "smsUnavailable"
  /** Due while the sender was inactive. */
  | "senderUnavailable"
  /** Due (or taken back) while its recipient was opted out. */
  | "optedOut"

interface ModelMessage extends Creation {
  readonly id: string
  readonly kind: "immediate" | "scheduled"
  path: Path
  /** The answer the creation gave (undefined when it crashed). */
  readonly firstAnswer: Answer | undefined
  /** Submissions counted when the message was first seen `unknown`. */
  submitsWhenUnknown: number | undefined
  /** Submissions counted when its recipient's opt-out committed (undefined while not opted out). */
  submitsAtOptOut?: number | undefined
}

interface Model {
  readonly orgId: string
  readonly messages: Array<ModelMessage>
  smsEnabled: boolean
  senderActive: boolean
  /** The numbers opted out of the organisation's messages. */
  optedOut: Set<string>
  /** Creations refused with an answer that is not stored: an identical retry runs again. */
  refused: Array<Creation>
  keySeq: number
}

/** The real system of fast-check's model run: its commands are promises, each an Effect run with the suite's app. */
interface Real {
  readonly run: <A, E>(effect: Effect.Effect<A, E, App | AppServices>) => Promise<A>
}

const reservedStatuses: ReadonlyArray<MessageStatus> = ["scheduled", "processing", "unknown"]
const consumedStatuses: ReadonlyArray<MessageStatus> = ["accepted", "delivered", "undeliverable"]

type SubmitBehaviour = "accept" | "reject" | "unknown" | "unreachable"
type StatusBehaviour = "accepted" | "not_received" | "unknown"

/**
 * The simulator test numbers (docs/integrators.md#simulator-test-numbers), as this test reads them
 * (independently of the simulator's code): what a
 * submission answers, which receipt follows, and what verification answers about a message the
 * provider received (about one it never received: not received).
 */
const table: Record<
  string,
  {
    readonly submit: SubmitBehaviour
    readonly receipt: "delivered" | "undeliverable" | "none"
    readonly status: StatusBehaviour
    readonly clean: MessageStatus
  }
> = {
  [testNumbers.delivered]: { submit: "accept", receipt: "delivered", status: "accepted", clean: "delivered" },
  [testNumbers.undeliverable]: {
    submit: "accept",
    receipt: "undeliverable",
    status: "accepted",
    clean: "undeliverable"
  },
  [testNumbers.rejected]: { submit: "reject", receipt: "none", status: "not_received", clean: "failed" },
  [testNumbers.unknownThenAccepted]: {
    submit: "unknown",
    receipt: "delivered",
    status: "accepted",
    clean: "delivered"
  },
  [testNumbers.unreachable]: { submit: "unreachable", receipt: "none", status: "not_received", clean: "failed" },
  [testNumbers.acceptedNoReceipt]: { submit: "accept", receipt: "none", status: "accepted", clean: "accepted" },
  [testNumbers.slow]: { submit: "accept", receipt: "delivered", status: "accepted", clean: "delivered" },
  [testNumbers.unknownNeverReceived]: { submit: "unknown", receipt: "none", status: "not_received", clean: "failed" },
  [testNumbers.unknownForGood]: { submit: "unknown", receipt: "none", status: "unknown", clean: "unknown" }
}
const behaviourOf = (to: string) =>
  table[to] ?? {
    submit: "accept" as const,
    receipt: "delivered" as const,
    status: "accepted" as const,
    clean: "delivered" as const
  }

/** The status a message ends in after the drain, given its number and path. */
const expectedFinal = (m: ModelMessage): MessageStatus => {
  const b = behaviourOf(m.request.to)
  switch (m.path) {
    case "clean":
      return b.clean
    case "neverMarked":
      return "failed"
    case "smsUnavailable":
      return "failed"
    case "optedOut":
      return "failed"
    case "senderUnavailable":
      return "blocked"
    // verification asks a provider that never received it: not received, so failed
    case "markedNotSent":
      return "failed"
    case "sentNotSettled":
      // verification of what the provider did with it; an accepted one's receipt, kept while the
      // message was not yet accepted, then applies
      switch (b.submit) {
        case "accept":
          return b.receipt === "none" ? "accepted" : b.receipt
        case "unknown":
          return b.clean
        case "reject":
        case "unreachable":
          return "failed"
      }
  }
}

/** The answer an immediate send gives when it runs to completion (docs/decisions.md#the-provider-simulator). */
const expectedImmediate = (to: string): { readonly status: number; readonly code?: string } => {
  switch (behaviourOf(to).submit) {
    case "accept":
      return { status: 201 }
    case "reject":
      return { status: 502, code: "provider_rejected" }
    case "unknown":
      return { status: 502, code: "provider_result_unknown" }
    case "unreachable":
      return { status: 503, code: "dispatch_unavailable" }
  }
}

/** The answer a crashed immediate send's key holds once recovery settled it (docs/decisions.md#idempotency). */
const expectedAfterRecovery = (m: ModelMessage): { readonly status: number; readonly code?: string } | undefined => {
  if (m.kind === "scheduled") return { status: 202 }
  switch (m.path) {
    case "clean":
      return m.firstAnswer
    case "neverMarked":
      return { status: 503, code: "dispatch_unavailable" }
    case "markedNotSent":
    case "sentNotSettled":
      return { status: 502, code: "provider_result_unknown" }
    default:
      return undefined
  }
}

const codeOf = (body: unknown): string | undefined =>
  typeof body === "object" && body !== null && "error" in body
    ? (body as { readonly error: { readonly code: string } }).error.code
    : undefined

// ---------------------------------------------------------------------------------------------
// The checks run after every command
// ---------------------------------------------------------------------------------------------

interface Row {
  readonly id: string
  readonly status: MessageStatus
  readonly segments: number
  /** Its timeline collapsed by compaction, a day after it became final: its settled holds are gone with it. */
}

const rowsOf = (orgId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<Row>`SELECT id::text AS id, status, segments::integer AS segments FROM messages
      WHERE organisation_id = ${orgId} ORDER BY created_at, id`
  })

const checkInvariants = (model: Model, after: string) =>
  Effect.gen(function* () {
    const where = `after ${after}`
    const { rows, timelines, totals, holds, entries } = yield* Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const store = yield* MessageStore
      const rows = yield* rowsOf(model.orgId)
      const timelines = new Map<
        string,
        ReadonlyArray<{ fromStatus: MessageStatus | null; toStatus: MessageStatus; source: string }>
      >()
      for (const r of rows) timelines.set(r.id, yield* store.timeline(model.orgId, r.id))
      const totals = yield* (yield* Ledger).totals(model.orgId)
      const holds = yield* sql<{
        messageId: string
        pending: number
        posted: number
        voided: number
      }>`SELECT message_id::text AS message_id,
          pending, posted, voided FROM (${sql.literal(messageCreditsSql)}) AS c WHERE organisation_id = ${model.orgId} ORDER BY message_id`
      const entries = yield* sql<{
        messageId: string
        kind: string
        amount: number
      }>`SELECT message_id::text AS message_id, kind,
          sum(amount)::integer AS amount
        FROM credit_entries WHERE organisation_id = ${model.orgId} AND message_id IS NOT NULL
        GROUP BY message_id, kind ORDER BY message_id, kind`
      return { rows, timelines, totals, holds, entries }
    })

    // the database holds exactly the messages the model admitted
    expect(rows.map((r) => r.id).sort(), `message rows ${where}`).toEqual(model.messages.map((m) => m.id).sort())

    for (const row of rows) {
      const timeline = timelines.get(row.id)!
      const label = `message ${row.id} (${model.messages.find((m) => m.id === row.id)?.request.to}) ${where}: timeline ${timeline
        .map((e) => `${e.fromStatus ?? "-"}->${e.toStatus} [${e.source}]`)
        .join(", ")}`
      expect(timeline.length, label).toBeGreaterThan(0)
      const [first, ...rest] = timeline
      expect(first!.fromStatus, label).toBeNull()
      expect(["scheduled", "processing"], label).toContain(first!.toStatus)
      expect(first!.source, label).toBe("admission")
      let previous = first!.toStatus
      for (const e of rest) {
        expect(e.fromStatus, label).toBe(previous)
        expect(
          canTransition(e.fromStatus!, e.toStatus),
          `${e.fromStatus} -> ${e.toStatus} is not a transition of section 7; ${label}`
        ).toBe(true)
        // unknown -> accepted | failed only through verification with the provider
        if (e.fromStatus === "unknown") expect(e.source, label).toBe("verification")
        previous = e.toStatus
      }
      expect(row.status, `current status is the timeline's last; ${label}`).toBe(previous)

      // at most one submission, and none once unknown
      const m = model.messages.find((x) => x.id === row.id)!
      const submits = yield* submitCount(row.id)
      expect(submits, `submissions of ${label}`).toBeLessThanOrEqual(1)
      const everUnknown = timeline.some((e) => e.toStatus === "unknown")
      if (everUnknown && m.submitsWhenUnknown === undefined) m.submitsWhenUnknown = submits
      if (m.submitsWhenUnknown !== undefined) {
        expect(submits, `a message once unknown was submitted again; ${label}`).toBe(m.submitsWhenUnknown)
      }
      if (m.submitsAtOptOut !== undefined) {
        expect(submits, `a message reached the provider after its recipient opted out; ${label}`).toBe(
          m.submitsAtOptOut
        )
      }

      // its credits: pending while reserved (its hold), posted once consumed, voided once released (its entries)
      const own = holds.filter((h) => h.messageId === row.id)
      const state = reservedStatuses.includes(row.status)
        ? "pending"
        : consumedStatuses.includes(row.status)
          ? "posted"
          : "voided"
      expect(own, `credits of ${label}`).toEqual([
        { messageId: row.id, pending: 0, posted: 0, voided: 0, [state]: row.segments }
      ])
      const settlement = {
        pending: [],
        posted: [{ kind: "consume", amount: row.segments }],
        voided: [{ kind: "release", amount: row.segments }]
      }[state]
      expect(
        entries.filter((e) => e.messageId === row.id).map(({ kind, amount }) => ({ kind, amount })),
        `credit entries of ${label}`
      ).toEqual([...settlement, { kind: "reserve", amount: row.segments }])
    }
    expect(
      holds.every((h) => rows.some((r) => r.id === h.messageId)),
      `holds without a message ${where}`
    ).toBe(true)

    const sum = (statuses: ReadonlyArray<MessageStatus>) =>
      rows.filter((r) => statuses.includes(r.status)).reduce((n, r) => n + r.segments, 0)
    expect(
      totals.consumed + totals.reserved + totals.available + totals.expiredUnreserved,
      `ledger invariant ${where}`
    ).toBe(totals.granted)
    expect(totals.reserved, `reserved = segments of scheduled/processing/unknown messages ${where}`).toBe(
      sum(reservedStatuses)
    )
    expect(totals.consumed, `consumed = segments of accepted/delivered/undeliverable messages ${where}`).toBe(
      sum(consumedStatuses)
    )
  })

// ---------------------------------------------------------------------------------------------
// One round of each kind of background work (src/dispatch/WorkSteps.ts), the dispatcher's
// optionally crashing
// ---------------------------------------------------------------------------------------------

type DispatchCrash =
  | { readonly at: "afterClaim" }
  | { readonly at: "beforeProvider" | "afterProvider"; readonly after: number }
  | undefined

/**
 * The messages the dispatcher settled because SMS was off or the sender inactive when they fell
 * due: the model's availability must say so, and their path says where they must end.
 */
const noteUnavailable = (model: Model) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settled = yield* sql<{
      messageId: string
      toStatus: MessageStatus
    }>`SELECT message_id::text AS message_id, to_status
      FROM (${sql.literal(timelineEntriesSql)}) AS e WHERE organisation_id = ${model.orgId} AND source = 'dispatch' AND to_status IN ('failed', 'blocked')`
    const expected = !model.smsEnabled ? "failed" : !model.senderActive ? "blocked" : "(none: available)"
    for (const { messageId, toStatus } of settled) {
      const m = model.messages.find((x) => x.id === messageId)
      const path = toStatus === "failed" ? ("smsUnavailable" as const) : ("senderUnavailable" as const)
      if (m === undefined || m.path === path) continue
      expect(
        { path: m.path, status: toStatus },
        `dispatch settled ${m.request.to} while sms ${model.smsEnabled}, sender ${model.senderActive}`
      ).toEqual({ path: "clean", status: expected })
      m.path = path
    }
  })

/**
 * One dispatcher round: WorkSteps.dispatchDue. With a crash, a copy of it (WorkSteps.dispatch):
 * it claims what is due, then dispatches the claimed messages one by one, so that `after` says
 * where the process dies. The simulator paces nothing, so the claim starts what it takes
 * (WorkSteps.claimDue): a crash after the claim leaves every claimed message started by the dead
 * process and unsent, except those it could not start (SMS off, sender inactive), claimed by the
 * dead process until the claim runs out; a later one leaves the messages from the `after`-th on
 * started by the dead process: unsent, or sent and unsettled.
 */
const dispatchStep = (model: Model, crash: DispatchCrash) =>
  Effect.gen(function* () {
    const steps = yield* WorkSteps
    if (crash === undefined) {
      const claimed = yield* steps.dispatchDue
      yield* noteUnavailable(model)
      yield* noteOptedOut(model)
      return claimed
    }
    const queue = yield* MessageQueueStore
    const provider = yield* Provider
    const claimed = yield* steps.claimDue(steps.window)
    const from = crash.at === "afterClaim" ? 0 : crash.after
    for (const m of claimed.slice(0, from)) yield* steps.dispatch(m)
    const left = claimed.slice(from)
    yield* abandon(left.map((m) => m.id))
    for (const m of left) {
      const mine = model.messages.find((x) => x.id === m.id)
      // one only claimed, the dead process starts when its turn comes, unless it died right after the claim
      const started =
        m.claim === "claimed"
          ? crash.at !== "afterClaim" && (yield* queue.start([m], yield* now, randomUUID()))[0] === undefined
          : m.claim === "started"
      // unavailable, or not started: another dispatcher settles or starts it once the claim runs out
      if (!started || mine === undefined) continue
      if (crash.at !== "afterProvider") mine.path = "markedNotSent"
      else {
        mine.path = "sentNotSettled"
        yield* provider.submit(submissionOf(m))
      }
    }
    yield* noteUnavailable(model)
    yield* noteOptedOut(model)
    return claimed.length
  })

/**
 * The messages failed at their turn because their recipient had opted out: the model must say it
 * is, and their path says where they end.
 */
const noteOptedOut = (model: Model) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settled = yield* sql<{ messageId: string }>`SELECT message_id::text AS message_id
      FROM (${sql.literal(timelineEntriesSql)}) AS e WHERE organisation_id = ${model.orgId} AND source = 'opted_out'`
    for (const { messageId } of settled) {
      const m = model.messages.find((x) => x.id === messageId)
      if (m === undefined || m.path === "optedOut") continue
      expect(model.optedOut.has(m.request.to), `${m.request.to} failed as opted out while it was not`).toBe(true)
      expect(m.path, `${m.request.to} failed as opted out after another fate`).toBe("clean")
      m.path = "optedOut"
    }
  })

/** Runs `step` until it finds nothing more; returns how much it did. */
const drained = (step: Effect.Effect<number, unknown>) =>
  Effect.gen(function* () {
    let total = 0
    while (true) {
      const n = yield* step
      if (n === 0) return total
      total += n
    }
  })

/** One verifier round. */
const verifyStep = WorkSteps.use((steps) => steps.verifyDue)

/** One recovery round (without its warning: recovering what the crashes left is what this test does). */
const recoveryStep = WorkSteps.use((steps) => steps.recoverAbandoned).pipe(
  Effect.provideService(References.MinimumLogLevel, "Error")
)

/** The simulator sends the receipts it owes by now, and the service applies what it stored. */
const receiptStep = Effect.gen(function* () {
  // the simulator provides its control beside the provider: the app's services do not name it
  const sent = yield* drained(Option.getOrThrow(yield* Effect.serviceOption(SimulatorControl)).runDue)
  const applied = yield* drained((yield* WorkSteps).applyReceipts)
  return sent + applied
})

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<Model, Real>

const command = (
  label: string,
  // biome-ignore lint/suspicious/noConfusingVoidType: a command's body may end in a step that returns nothing
  body: (model: Model) => Effect.Effect<string | void, unknown, App | AppServices>
): Cmd => ({
  check: () => true,
  run: (model, real) =>
    real.run(
      Effect.gen(function* () {
        const detail = yield* body(model)
        yield* checkInvariants(model, detail === undefined ? label : `${label} ${detail}`)
      })
    ),
  toString: () => label
})

type AdmitCrash = "none" | "beforeMark" | "beforeProvider" | "afterProvider"

interface AdmitSpec {
  readonly to: string
  readonly segments: 1 | 2
  readonly delayMs: number | null
  readonly crash: AdmitCrash
}

const textOf = (segments: 1 | 2) => (segments === 1 ? "Salama! Property test message." : "a".repeat(200))

/** A creation request as the handler hands it to Messages.create. */
interface Creation {
  readonly key: string
  readonly fingerprint: string
  readonly request: MessageRequest
}

/**
 * Runs a creation, crashing where asked, and checks its outcome against the model: refused
 * (nothing created) exactly when SMS is off, the sender inactive or credits short, otherwise
 * one message with the answer of docs/decisions.md#the-provider-simulator. Records it in the model.
 */
const runCreation = (model: Model, creation: Creation, wanted: AdmitCrash) =>
  Effect.gen(function* () {
    const { key, fingerprint, request } = creation
    const result = yield* Effect.gen(function* () {
      const messages = yield* Messages
      const ledger = yield* Ledger
      const at = yield* now
      const available = (yield* ledger.totals(model.orgId)).available
      const before = new Set((yield* rowsOf(model.orgId)).map((r) => r.id))
      const crash =
        request.sendAt !== null ||
        !model.smsEnabled ||
        !model.senderActive ||
        available < request.segments ||
        model.optedOut.has(request.to)
          ? "none"
          : wanted

      if (crash === "beforeMark") {
        // the admission transaction of Messages.create, then the process dies
        const sql = yield* SqlClient.SqlClient
        const store = yield* MessageStore
        const idempotency = yield* Idempotency
        const id = randomUUID()
        yield* Effect.gen(function* () {
          const claim = yield* idempotency.claim({
            organisationId: model.orgId,
            route: "messages",
            key,
            fingerprint,
            messageId: id
          })
          expect(claim._tag, "the key of a crashing admission is new").toBe("New")
          yield* store.insert(
            model.orgId,
            [
              {
                id,
                batchId: null,
                batchPosition: null,
                toNumber: request.to,
                senderName: sender,
                text: request.text,
                segments: request.segments,
                status: "processing",
                sendAt: null,
                workerId: randomUUID()
              }
            ],
            at
          )
          yield* ledger.reserve(model.orgId, [{ messageId: id, credits: request.segments }])
        }).pipe(sql.withTransaction, Effect.orDie)
        return { _tag: "crashed" as const, id, path: "neverMarked" as const }
      }

      const app = yield* App
      app.calls.fault = crash === "none" ? "none" : crash
      const exit = yield* messages.create(model.orgId, key, fingerprint, request).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            app.calls.fault = "none"
          })
        ),
        Effect.exit
      )
      const created = (yield* rowsOf(model.orgId)).filter((r) => !before.has(r.id))
      if (Exit.isSuccess(exit)) {
        expect(exit.value.replayed, "a new request is not a replay").toBe(false)
        expect(created.length, "one message created").toBe(1)
        return { _tag: "created" as const, id: created[0]!.id, answer: exit.value.answer }
      }
      const failure = Cause.findErrorOption(exit.cause)
      if (failure._tag === "Some") {
        expect(created, `nothing is created on ${failure.value._tag}`).toEqual([])
        return { _tag: "refused" as const, error: failure.value._tag, available, at }
      }
      const crashed = Cause.squash(exit.cause)
      if (!(crashed instanceof SimulatedCrash)) return yield* Effect.die(crashed)
      expect(created.length, "the crashed admission left its message").toBe(1)
      yield* abandon([created[0]!.id])
      return {
        _tag: "crashed" as const,
        id: created[0]!.id,
        path: crash === "beforeProvider" ? ("markedNotSent" as const) : ("sentNotSettled" as const)
      }
    })

    model.refused = model.refused.filter((c) => c.key !== key)
    if (result._tag === "refused") {
      // the order of Messages.create's checks: opt-out, schedule, organisation, sender, credits
      const expected = model.optedOut.has(request.to)
        ? "ValidationError"
        : request.sendAt !== null && request.sendAt.getTime() <= result.at.getTime()
          ? "InvalidSchedule"
          : !model.smsEnabled
            ? "SmsUnavailable"
            : !model.senderActive
              ? "SenderNameUnavailable"
              : result.available < request.segments
                ? "InsufficientCredits"
                : "(admitted)"
      expect(result.error, `admission refused with ${result.available} available`).toBe(expected)
      if (process.env.PROPERTY_STATS)
        stats.set(`refused ${result.error}`, (stats.get(`refused ${result.error}`) ?? 0) + 1)
      // not stored (docs/decisions.md#idempotency): an identical retry runs again
      model.refused.push(creation)
      return `-> ${result.error}`
    }
    expect(
      model.smsEnabled && model.senderActive,
      `admitted while sms ${model.smsEnabled}, sender ${model.senderActive}`
    ).toBe(true)
    const kind = request.sendAt === null ? ("immediate" as const) : ("scheduled" as const)
    if (result._tag === "created") {
      if (kind === "scheduled") expect(result.answer.status, "a scheduled message answers 202").toBe(202)
      else {
        const expected = expectedImmediate(request.to)
        expect(
          { status: result.answer.status, code: codeOf(result.answer.body) },
          `the immediate answer for ${request.to}`
        ).toEqual({ status: expected.status, code: expected.code })
      }
    }
    model.messages.push({
      id: result.id,
      key,
      fingerprint,
      request,
      kind,
      path: result._tag === "created" ? "clean" : result.path,
      firstAnswer: result._tag === "created" ? result.answer : undefined,
      submitsWhenUnknown: undefined
    })
    return `-> ${result.id}${result._tag === "crashed" ? ` crashed (${result.path})` : ` ${result.answer.status}`}`
  })

const admit = (spec: AdmitSpec) =>
  command(
    `admit(${spec.to}, ${spec.segments} seg, ${spec.delayMs === null ? "now" : `in ${spec.delayMs} ms`}${
      spec.crash === "none" ? "" : `, crash ${spec.crash}`
    })`,
    (model) =>
      Effect.gen(function* () {
        const creation = yield* Effect.gen(function* () {
          const at = yield* now
          const sendAt = spec.delayMs === null ? null : new Date(at.getTime() + spec.delayMs)
          const text = textOf(spec.segments)
          const body = { to: spec.to, text, ...(sendAt === null ? {} : { send_at: sendAt.toISOString() }) }
          return {
            key: `k-${model.keySeq++}`,
            fingerprint: (yield* Idempotency).fingerprint("messages", body),
            request: { to: spec.to, text, senderName: undefined, segments: spec.segments, sendAt }
          } satisfies Creation
        })
        return yield* runCreation(model, creation, spec.crash)
      })
  )

/**
 * An identical retry of an earlier creation. One that created a message replays its stored
 * answer and never creates or sends again; a crashed send's retry finds its process dead,
 * recovers its message at once and replays the recovered answer; one that was refused runs again
 * (docs/decisions.md#idempotency).
 */
const replay = (pick: number) =>
  command(`replay(#${pick})`, (model) =>
    Effect.gen(function* () {
      const all: ReadonlyArray<Creation> = [...model.messages, ...model.refused]
      if (all.length === 0) return "(nothing to replay)"
      const picked = all[pick % all.length]!
      const m = model.messages.find((x) => x.key === picked.key)
      if (m === undefined) return `${picked.key} (refused before) ${yield* runCreation(model, picked, "none")}`
      const exit = yield* Effect.gen(function* () {
        return yield* (yield* Messages).create(model.orgId, m.key, m.fingerprint, m.request)
      }).pipe(Effect.exit)
      expect(Exit.isSuccess(exit), `replay of ${m.key}: ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`).toBe(
        true
      )
      if (Exit.isFailure(exit)) return
      expect(exit.value.replayed, "an identical retry is a replay").toBe(true)
      const answer = exit.value.answer
      if (m.firstAnswer !== undefined) expect(answer, `replay of ${m.key}`).toEqual(m.firstAnswer)
      else {
        const expected = expectedAfterRecovery(m)!
        expect({ status: answer.status, code: codeOf(answer.body) }, `replay of crashed ${m.key}`).toEqual({
          status: expected.status,
          code: expected.code
        })
      }
      return `${m.key} -> ${answer.status}`
    })
  )

/** The clock moves on; no work runs (the step commands run it). */
const clock = (byMs: number) => command(`clock += ${byMs} ms`, () => Effect.flatMap(App, (app) => app.moveClock(byMs)))

const grant = (amount: number, days: number | null) =>
  command(`grant(${amount}, ${days === null ? "never expires" : `valid ${days} more days`})`, (model) =>
    Effect.gen(function* () {
      const ms = (yield* now).getTime()
      yield* (yield* Ledger).grant(model.orgId, amount, days === null ? null : utcDay(ms + days * dayMs))
    })
  )

/** The operator enables or disables SMS for the organisation, or (de)activates its sender. */
const availability = (smsEnabled: boolean, senderActive: boolean) =>
  command(`availability(sms ${smsEnabled ? "on" : "off"}, sender ${senderActive ? "active" : "inactive"})`, (model) =>
    Effect.gen(function* () {
      const orgs = yield* Organisations
      yield* orgs.update(model.orgId, { smsEnabled }).pipe(Effect.orDie)
      yield* orgs.setSender(model.orgId, sender, senderActive).pipe(Effect.orDie)
      model.smsEnabled = smsEnabled
      model.senderActive = senderActive
    })
  )

/**
 * A number opts out of the organisation's messages (through the API's service), or back in: the
 * recipient of the `pick`-th message admitted so far (so that opt-outs meet messages), else `other`.
 */
const consent = (pick: number, other: string, optOut: boolean) =>
  command(`${optOut ? "opt out" : "opt in"}(#${pick})`, (model) =>
    Effect.gen(function* () {
      const to = model.messages.length === 0 ? other : model.messages[pick % model.messages.length]!.request.to
      const optOuts = yield* OptOuts
      if (optOut) {
        const { created } = yield* optOuts.optOut(model.orgId, to, "api")
        expect(created, `opt-out of ${to} made now`).toBe(!model.optedOut.has(to))
        model.optedOut.add(to)
        for (const m of model.messages.filter((x) => x.request.to === to))
          m.submitsAtOptOut ??= yield* submitCount(m.id)
      } else {
        const exit = yield* Effect.exit(optOuts.optIn(model.orgId, to, "api"))
        expect(Exit.isSuccess(exit), `opt-in of ${to} succeeds exactly when it was opted out`).toBe(
          model.optedOut.has(to)
        )
        model.optedOut.delete(to)
        for (const m of model.messages.filter((x) => x.request.to === to)) m.submitsAtOptOut = undefined
      }
      return to
    })
  )

const dispatch = (crash: DispatchCrash) =>
  command(
    `dispatch${crash === undefined ? "" : ` (crash ${crash.at}${"after" in crash ? ` after ${crash.after}` : ""})`}`,
    (model) =>
      Effect.gen(function* () {
        const n = yield* dispatchStep(model, crash)
        return `-> ${n} claimed`
      })
  )

const verify = command("verify", () => Effect.map(verifyStep, (n) => `-> ${n} claimed`))
const recover = command("recover", () => Effect.map(recoveryStep, (n) => `-> ${n} recovered`))
const receipts = command("receipts", () => Effect.map(receiptStep, (n) => `-> ${n} sent or applied`))

const numberArb = fc.oneof(
  { arbitrary: fc.constantFrom(...simulatorNumbers), weight: 4 },
  { arbitrary: fc.constantFrom(...ordinaryNumbers), weight: 1 }
)

const admitArb = fc
  .record({
    to: numberArb,
    segments: fc.constantFrom(1 as const, 2 as const),
    delayMs: fc.option(fc.integer({ min: 1_000, max: 600_000 }), { nil: null, freq: 2 }),
    crash: fc.oneof(
      { arbitrary: fc.constant<AdmitCrash>("none"), weight: 5 },
      { arbitrary: fc.constantFrom<AdmitCrash>("beforeMark", "beforeProvider", "afterProvider"), weight: 2 }
    )
  })
  .map(admit)

const clockArb = fc.oneof(
  fc.constantFrom(1_000, receiptDelayMs + 1, verifyIntervalMs + 1, claimLeaseMs + 1, 600_000).map(clock),
  fc.integer({ min: 1, max: dayMs }).map(clock)
)

const dispatchArb = fc
  .oneof(
    { arbitrary: fc.constant<DispatchCrash>(undefined), weight: 4 },
    { arbitrary: fc.constant<DispatchCrash>({ at: "afterClaim" }), weight: 1 },
    {
      arbitrary: fc.record({
        after: fc.nat({ max: 1 }),
        at: fc.constantFrom("beforeProvider" as const, "afterProvider" as const)
      }),
      weight: 2
    }
  )
  .map(dispatch)

const commandsArb = fc.commands(
  [
    admitArb,
    admitArb,
    admitArb,
    admitArb,
    clockArb,
    clockArb,
    clockArb,
    dispatchArb,
    dispatchArb,
    fc.constant(verify),
    fc.constant(receipts),
    fc.constant(recover),
    fc.nat().map(replay),
    fc.tuple(fc.nat(), numberArb, fc.boolean()).map(([pick, to, out]) => consent(pick, to, out)),
    fc.tuple(fc.nat(), numberArb).map(([pick, to]) => consent(pick, to, true)),
    fc.tuple(fc.nat({ max: 3 }), fc.nat({ max: 3 })).map(([sms, active]) => availability(sms > 0, active > 0)),
    fc
      .tuple(fc.integer({ min: 1, max: 6 }), fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }))
      .map(([a, d]) => grant(a, d))
  ],
  { maxCommands, size: "max" }
)

const setupArb = fc.record({
  credits: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 5, max: 40 }), fc.integer({ min: 5, max: 40 })),
  days: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null, freq: 3 })
})

let sequences = 0
const stats = new Map<string, number>()

/**
 * Sequences share the database and the clock (which only moves forward): before each one,
 * whatever earlier ones left (an `unknown` for good, an unmatched receipt) is put out of the
 * way, so that this sequence's steps work on its own messages only.
 */
const retireLeftovers = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE messages SET verify_at = '9999-01-01T00:00:00Z' WHERE status = 'unknown'`
  yield* sql`UPDATE provider_receipts SET state = 'ignored' WHERE state = 'pending'`
  yield* sql`DELETE FROM simulator_receipts_owed`
})

/** Advances the clock with every piece of due work run, until nothing moves any more; then checks where each message ended. */
const drainAndCheck = (model: Model) =>
  Effect.gen(function* () {
    yield* Effect.gen(function* () {
      const work = yield* DueWork
      for (let round = 0; round < 4; round++) yield* work.advanceTo(new Date((yield* now).getTime() + 10 * 60_000))
      yield* noteUnavailable(model)
      yield* noteOptedOut(model)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "Error"))
    yield* checkInvariants(model, "the drain")
    const rows = yield* rowsOf(model.orgId)
    if (process.env.PROPERTY_STATS) {
      for (const m of model.messages) {
        const k = `${m.kind} ${m.path} -> ${rows.find((r) => r.id === m.id)!.status}`
        stats.set(k, (stats.get(k) ?? 0) + 1)
      }
    }
    for (const m of model.messages) {
      const status = rows.find((r) => r.id === m.id)!.status
      expect(status, `final status of ${m.request.to} (${m.kind}, ${m.path})`).toBe(expectedFinal(m))
    }
    // no key is left stuck: every creation replays what docs/decisions.md#idempotency says it answers
    for (const m of model.messages) {
      const exit = yield* Effect.gen(function* () {
        return yield* (yield* Messages).create(model.orgId, m.key, m.fingerprint, m.request)
      }).pipe(Effect.exit)
      expect(
        Exit.isSuccess(exit),
        `the key of ${m.request.to} (${m.kind}, ${m.path}) replays: ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`
      ).toBe(true)
      if (Exit.isSuccess(exit)) {
        const expected = expectedAfterRecovery(m)
        const answer = exit.value.answer
        expect(exit.value.replayed).toBe(true)
        if (m.firstAnswer !== undefined) expect(answer).toEqual(m.firstAnswer)
        else if (expected !== undefined) {
          expect(
            { status: answer.status, code: codeOf(answer.body) },
            `stored answer of ${m.request.to} (${m.path})`
          ).toEqual({ status: expected.status, code: expected.code })
        }
      }
    }
  })

/** A fresh organisation (sender `PROPTEST`) with `credits` valid `days` more days (null: never expire). */
const newOrganisation = (credits: number, days: number | null) =>
  Effect.gen(function* () {
    const org = yield* (yield* Organisations).create("Lifecycle property org", sender)
    if (credits > 0)
      yield* (yield* Ledger).grant(
        org.id,
        credits,
        days === null ? null : utcDay((yield* now).getTime() + days * dayMs)
      )
    return org.id
  })

withApp({
  label: "lifecycle_property",
  // slowMs 0: the slow number's real-time delay would only slow the sequences down
  config: { clock: "test", simulatorReceiptDelayMs: receiptDelayMs, simulatorSlowMs: 0, verifyIntervalMs }
})(`message lifecycle against its model (${backend})`, (it) => {
  it.effect(
    "a message due while its sender is inactive ends blocked, even if the dispatcher dies after claiming it",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        yield* retireLeftovers
        const orgId = yield* newOrganisation(1, null)
        const id = yield* Effect.gen(function* () {
          const sendAt = new Date((yield* now).getTime() + 1_000)
          const body = { to: testNumbers.delivered, text: "Due while the sender is off", send_at: sendAt.toISOString() }
          const { answer } = yield* (yield* Messages).create(
            orgId,
            "example",
            (yield* Idempotency).fingerprint("messages", body),
            {
              to: body.to,
              text: body.text,
              senderName: undefined,
              segments: 1,
              sendAt
            }
          )
          expect(answer.status).toBe(202)
          yield* (yield* Organisations).setSender(orgId, sender, false)
          return (answer.body as { readonly id: string }).id
        })
        const model: Model = {
          orgId,
          messages: [],
          smsEnabled: true,
          senderActive: false,
          optedOut: new Set(),
          refused: [],
          keySeq: 0
        }
        yield* app.moveClock(1_000)
        // the dispatcher dies after claiming it; once the claim runs out another one settles it
        yield* dispatchStep(model, { at: "afterClaim" })
        expect(
          yield* Effect.flatMap(MessageStore, (store) => store.find(orgId, id)).pipe(Effect.map((m) => m?.status))
        ).toBe("scheduled")
        yield* app.moveClock(claimLeaseMs + 1)
        yield* dispatchStep(model, undefined)
        const [row, timeline] = yield* Effect.gen(function* () {
          const store = yield* MessageStore
          return [yield* store.find(orgId, id), yield* store.timeline(orgId, id)] as const
        })
        expect(
          row?.status,
          `docs/decisions.md#the-provider-simulator: a sender that is inactive when a scheduled message falls due makes that message blocked; timeline ${timeline
            .map((e) => `${e.fromStatus ?? "-"}->${e.toStatus} [${e.source}]`)
            .join(", ")}`
        ).toBe("blocked")
        expect((yield* Effect.flatMap(Ledger, (l) => l.totals(orgId))).reserved).toBe(0)
        expect(yield* submitCount(id)).toBe(0)
      }),
    60_000
  )

  it.effect(
    `random commands with crashes keep every invariant (numRuns ${numRuns}, up to ${maxCommands} commands)`,
    () =>
      Effect.gen(function* () {
        const real: Real = { run: Effect.runPromiseWith(yield* Effect.context<App | AppServices>()) }
        const property = fc.asyncProperty(setupArb, commandsArb, (setup, commands) =>
          real.run(
            Effect.gen(function* () {
              sequences++
              yield* retireLeftovers
              const orgId = yield* newOrganisation(setup.credits, setup.days)
              const model: Model = {
                orgId,
                messages: [],
                smsEnabled: true,
                senderActive: true,
                optedOut: new Set(),
                refused: [],
                keySeq: 0
              }
              yield* checkInvariants(model, "setup")
              yield* Effect.promise(() => fc.asyncModelRun(() => ({ model, real }), commands))
              yield* drainAndCheck(model)
            })
          )
        )
        yield* Effect.promise(() => fc.assert(property, { numRuns, ...(seed === undefined ? {} : { seed }) }))
        if (process.env.PROPERTY_STATS)
          console.log(
            [...stats.entries()]
              .sort()
              .map(([k, n]) => `${n}\t${k}`)
              .join("\n")
          )
        expect(sequences).toBeGreaterThanOrEqual(numRuns)
      }),
    1_200_000
  )
})
