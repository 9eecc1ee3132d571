/**
 * The simulator test numbers (docs/integrators.md#simulator-test-numbers) through
 * SMS_PROVIDER=smpp (the SMSC simulator of docs/operators.md#the-smsc-simulator, in-process): every
 * test number sent immediately, scheduled and in a batch meets the same HTTP answer, final
 * status, timeline and credits as with the in-process simulator, although the mechanism differs
 * (04 and 08 are settled by the SMSC's late answer kept as verification evidence, 05 is throttled
 * until the response deadline, 09 is never answered). Every answer stays stored under its key,
 * and nothing but the throttled number is ever written twice to the SMSC.
 */
import { afterAll, beforeAll, expect } from "@effect/vitest"
import { Effect } from "effect"
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { Ledger } from "../../../src/ledger/Ledger.ts"
import { getBatch, postBatch, withOffset } from "../../batches/support.ts"
import { balanceOf, bodyOf, create, messagesPath } from "../../support/Messages.ts"
import { App, backend, type Reply, withApp } from "../../support/TestApp.ts"
import { rowOf, table } from "../TestNumbers.ts"
import { type MessageFacts, settled, smppApp, submitsAt } from "./service.ts"
import { routeTo, startSmsc } from "./support.ts"

const slowMs = 300
const responseTimeoutMs = 2000
const granted = 20

let smsc: Smsc

type Mode = "immediate" | "scheduled" | "batch"
interface SentMessage {
  readonly id: string
  readonly text: string
  readonly reply: Reply
  readonly key: string
  readonly sendAt?: number
}
interface Sent {
  readonly orgId: string
  readonly apiKey: string
  /** Per recipient: its message id, its text, and (immediate) the answer and its key. */
  readonly messages: Map<string, SentMessage>
  readonly facts: ReadonlyMap<string, MessageFacts>
}
const sent = {} as Record<Mode, Sent>
let batch: { id: string; key: string; request: unknown; reply: Reply }

/** Every message of the organisation reached its row's status, and 09 was verified in vain at least twice. */
const settle = (orgId: string) =>
  Effect.flatMap(App, (app) =>
    settled(
      orgId,
      (m) => m.status === rowOf.get(m.to)!.final && (m.status !== "unknown" || (app.calls.queries.get(m.id) ?? 0) >= 2),
      {
        what: "every row in its final status"
      }
    )
  )

beforeAll(async () => {
  smsc = await startSmsc({ slowMs, lateMs: responseTimeoutMs + 1000 })
})

/** Once the app is up: every row sent immediately, scheduled and in a batch, and all of them settled. */
const sendTable = Effect.gen(function* () {
  const app = yield* App
  const orgs = {
    immediate: yield* app.newOrg({ credits: granted }),
    scheduled: yield* app.newOrg({ credits: granted }),
    batch: yield* app.newOrg({ credits: granted })
  }
  // whole seconds: the batch's send_at is written without milliseconds
  const sendAt = Math.ceil(((yield* app.now) + 3000) / 1000) * 1000

  // scheduled and batch first: their admissions answer at once, their sends fall due meanwhile
  const scheduled = new Map<string, SentMessage>()
  for (const { to } of table) {
    const text = `scheduled to ${to}`
    const { id, reply, key } = yield* create(orgs.scheduled.apiKey, { to, text, sendAt })
    expect(reply.status, reply.text).toBe(202)
    scheduled.set(to, { id, text, reply, key, sendAt })
  }
  const request = {
    recipients: table.map((r) => r.to),
    text: "in a batch",
    send_at: withOffset(new Date(sendAt), "+03:00")
  }
  const key = `batch-${crypto.randomUUID()}`
  const reply = yield* postBatch(orgs.batch.apiKey, request, key)
  expect(reply.status, reply.text).toBe(202)
  batch = { id: reply.body.id, key, request, reply }

  const immediate = new Map(
    yield* Effect.all(
      table.map(({ to }) =>
        Effect.gen(function* () {
          const text = `now to ${to}`
          const { id, reply, key } = yield* create(orgs.immediate.apiKey, { to, text })
          return [to, { id, text, reply, key }] as const
        })
      ),
      { concurrency: "unbounded" }
    )
  )

  const [immediateFacts, scheduledFacts, batchFacts] = yield* Effect.all(
    [settle(orgs.immediate.orgId), settle(orgs.scheduled.orgId), settle(orgs.batch.orgId)],
    { concurrency: "unbounded" }
  )
  const batchMessages = new Map(
    [...batchFacts.values()].map((m) => [m.to, { id: m.id, text: "in a batch", reply, key }])
  )
  sent.immediate = { ...orgs.immediate, messages: immediate, facts: immediateFacts }
  sent.scheduled = { ...orgs.scheduled, messages: scheduled, facts: scheduledFacts }
  sent.batch = { ...orgs.batch, messages: batchMessages, facts: batchFacts }
})
afterAll(async () => {
  await smsc?.dispose()
})

const head: Record<Mode, ReadonlyArray<string>> = {
  immediate: ["->processing@admission"],
  scheduled: ["->scheduled@admission", "scheduled>processing@dispatch"],
  batch: ["->scheduled@admission", "scheduled>processing@dispatch"]
}

/** Asserts every row for one mode: final status, timeline, credits, one provider call, what the SMSC received. */
const expectTable = (mode: Mode) =>
  Effect.gen(function* () {
    const app = yield* App
    const { orgId, messages, facts } = sent[mode]
    const observed = table.map((row) => {
      const m = messages.get(row.to)!
      const f = facts.get(m.id)!
      return {
        to: row.to,
        status: f.status,
        transitions: f.transitions,
        credits: f.credits,
        // 04 and 08 are settled by the SMSC's late answer (SMPP has no id to query them by); 09 gets none
        evidence: f.evidence,
        providerCalls: app.calls.submits.get(m.id),
        // the throttled number is written again until the deadline; everything else exactly once
        smscSubmits:
          row.to === testNumbers.unreachable ? submitsAt(smsc, row.to, m.text) > 2 : submitsAt(smsc, row.to, m.text)
      }
    })
    expect(observed).toEqual(
      table.map((row) => ({
        to: row.to,
        status: row.final,
        transitions: [...head[mode], ...row.tail],
        credits: row.credits,
        evidence:
          row.to === testNumbers.unknownThenAccepted
            ? "accepted"
            : row.to === testNumbers.unknownNeverReceived
              ? "rejected"
              : null,
        providerCalls: 1,
        smscSubmits: row.to === testNumbers.unreachable ? true : 1
      }))
    )
    // 09 stays unknown for good: asked about (never resent), no evidence ever came
    const forGood = messages.get(testNumbers.unknownForGood)!.id
    expect(app.calls.queries.get(forGood)).toBeGreaterThanOrEqual(2)
    // docs/decisions.md#credits: 01, 02, 04, 06, 07 consumed; 03, 05, 08 released; 09 still reserved
    const totals = yield* Effect.gen(function* () {
      return yield* (yield* Ledger).totals(orgId)
    })
    expect(totals).toEqual({ granted, consumed: 5, reserved: 1, available: granted - 6, expiredUnreserved: 0 })
    expect(yield* balanceOf(orgId)).toEqual({ total: granted - 5, reserved: 1, available: granted - 6 })
  })

withApp(
  smppApp("smpp_table", () => [routeTo(smsc)], { responseTimeoutMs }),
  sendTable
)(`docs/decisions.md#the-provider-simulator through SMPP to the SMSC simulator (${backend})`, (it) => {
  it.effect(
    "immediate: each number's answer, then its final status and credits; each answer replays as first given",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey, messages } = sent.immediate
        for (const row of table) {
          const { id, reply, text, key } = messages.get(row.to)!
          const [status, code] = row.answer
          expect({ to: row.to, status: reply.status, code: reply.body?.error?.code }, reply.text).toEqual({
            to: row.to,
            status,
            code
          })
          if (status === 201) expect(reply.body).toMatchObject({ id, status: "accepted", to: row.to })
          else expect(reply.body.message_id).toBe(id)
          const again = yield* app.call("POST", messagesPath, {
            token: apiKey,
            body: bodyOf({ to: row.to, text }),
            headers: { "idempotency-key": key }
          })
          expect(
            { status: again.status, body: again.body, replayed: again.headers.get("idempotent-replayed") },
            row.to
          ).toEqual({ status: reply.status, body: reply.body, replayed: "true" })
        }
        yield* expectTable("immediate")
      })
  )

  it.effect("scheduled: each number meets its row at its send time; the 202 replays as first given", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { apiKey, messages } = sent.scheduled
      for (const row of table) {
        const { reply, text, key, sendAt } = messages.get(row.to)!
        const again = yield* app.call("POST", messagesPath, {
          token: apiKey,
          body: bodyOf({ to: row.to, text, sendAt: sendAt! }),
          headers: { "idempotency-key": key }
        })
        expect({ status: again.status, body: again.body }, row.to).toEqual({ status: 202, body: reply.body })
      }
      yield* expectTable("scheduled")
    })
  )

  it.effect(
    "in a batch: each member meets its row; the counts are the members' statuses; the 202 replays as first given",
    () =>
      Effect.gen(function* () {
        const { apiKey } = sent.batch
        expect((yield* getBatch(apiKey, batch.id)).counts).toEqual({
          scheduled: 0,
          processing: 0,
          accepted: 1,
          delivered: 3,
          undeliverable: 1,
          blocked: 0,
          failed: 3,
          unknown: 1
        })
        const again = yield* postBatch(apiKey, batch.request, batch.key)
        expect({ status: again.status, body: again.body }).toEqual({ status: 202, body: batch.reply.body })
        yield* expectTable("batch")
      })
  )
})
