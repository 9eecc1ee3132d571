/**
 * The life of messages after their admission, on the service's test clock (docs/decisions.md (Credits, Idempotency, The provider simulator, Message states, The test clock);
 * docs/integrators.md#message-lifecycle): the dispatcher submits scheduled messages at their send time and once only, each
 * simulator number reaches its final status with its ledger effect at the instants docs/decisions.md
 * gives, `unknown` is verified and never resubmitted, unavailable senders and organisations stop
 * a due message, messages of a dead process are recovered once its lease runs out (at once when
 * an identical retry asks), and receipts for final messages change nothing. Time moves only
 * through the clock stepper, which returns once the work due is done: no sleeps.
 */
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { countSegments } from "../../src/domain/Segments.ts"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { Recovery } from "../../src/messages/Recovery.ts"
import { Provider, ProviderInbox } from "../../src/provider/Provider.ts"
import { leaseTtlMs, ProcessLease } from "../../src/processes/ProcessLease.ts"
import { balanceOf, bodyOf, create, messagesPath, type Snapshot, snapshot, statusOf } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const receiptDelay = 2_000
const slowMs = 3_000
const verifyIntervalMs = 1_000

const ordinary = "+261341234567"
const twoSegments = "b".repeat(200)
const count = (counts: Map<string, number>, id: string) => counts.get(id) ?? 0

/**
 * What a process leaves when its work on an immediate send ends without settling it (it died, or
 * the work failed): the admission (claim, message owned by `worker`, reservation), then nothing;
 * or the message marked handed over, before the provider got it; or the provider's answer too.
 */
type Crash = "beforeMark" | "beforeCall" | "afterCall"
const leftProcessing = (orgId: string, worker: string, at: Date, to: string, key: string, crash: Crash) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* MessageStore
    const ledger = yield* Ledger
    const idempotency = yield* Idempotency
    const provider = yield* Provider
    const id = crypto.randomUUID()
    const c = { to, text: twoSegments }
    const segments = countSegments(c.text).segments
    yield* Effect.gen(function* () {
      const claim = yield* idempotency.claim({
        organisationId: orgId,
        route: "messages",
        key,
        fingerprint: idempotency.fingerprint("messages", bodyOf(c)),
        messageId: id
      })
      expect(claim._tag).toBe("New")
      yield* store.insert(
        orgId,
        [
          {
            id,
            batchId: null,
            batchPosition: null,
            toNumber: to,
            senderName: "INFO",
            text: c.text,
            segments,
            status: "processing",
            sendAt: null,
            workerId: worker
          }
        ],
        at
      )
      yield* ledger.reserve(orgId, [{ messageId: id, credits: segments }])
    }).pipe(sql.withTransaction)
    if (crash !== "beforeMark") yield* store.markSubmitted(orgId, [id], at)
    if (crash === "afterCall")
      yield* provider.submit({ organisationId: orgId, messageId: id, to, senderName: "INFO", text: c.text, segments })
    return { id, c, key }
  })

withApp({
  label: "lifecycle",
  config: { clock: "test", simulatorReceiptDelayMs: receiptDelay, simulatorSlowMs: slowMs, verifyIntervalMs }
})(`messages after admission, on the test clock (${backend})`, (it) => {
  it.effect("a scheduled message is not submitted before send_at, then exactly once at send_at", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
      const start = yield* app.now
      const sendAt = start + 10_000
      const { id, reply } = yield* create(apiKey, { to: ordinary, text: "at ten", sendAt })
      expect(reply.status).toBe(202)
      expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 1, available: 4 })

      yield* app.advanceTo(sendAt - 1)
      expect(count(app.calls.submits, id)).toBe(0)
      expect(yield* statusOf(apiKey, id)).toBe("scheduled")

      yield* app.advanceTo(sendAt)
      expect(yield* statusOf(apiKey, id)).toBe("accepted")
      expect(count(app.calls.submits, id)).toBe(1)

      yield* app.advance(30_000)
      expect(count(app.calls.submits, id)).toBe(1)
      expect(yield* snapshot(orgId, apiKey, id, start)).toEqual({
        status: "delivered",
        deliveryTime: 10_000 + receiptDelay,
        transitions: [
          "->scheduled@admission",
          "scheduled>processing@dispatch",
          "processing>accepted@provider",
          "accepted>delivered@receipt"
        ],
        at: [0, 10_000, 10_000, 10_000 + receiptDelay]
      })
      expect(yield* balanceOf(orgId)).toEqual({ total: 4, reserved: 0, available: 4 })
    })
  )

  it.effect(
    "each simulator number, scheduled: its final status, timeline, instants and ledger effect, one submission each",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const start = yield* app.now
        const dueIn = 5_000
        const sent: Array<{ name: string; orgId: string; apiKey: string; id: string }> = []
        for (const [name, to] of Object.entries(testNumbers)) {
          const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
          const { id } = yield* create(apiKey, { to, text: twoSegments, sendAt: start + dueIn })
          sent.push({ name, orgId, apiKey, id })
        }
        // well past every receipt and several verification rounds
        yield* app.advance(120_000)

        const observed: Record<string, unknown> = {}
        const snaps: Record<string, Snapshot> = {}
        for (const m of sent) {
          const snap = yield* snapshot(m.orgId, m.apiKey, m.id, start)
          snaps[m.name] = snap
          observed[m.name] = {
            status: snap.status,
            transitions: snap.transitions,
            balance: yield* balanceOf(m.orgId),
            submissions: count(app.calls.submits, m.id),
            delivered: snap.deliveryTime !== null
          }
        }
        const head = ["->scheduled@admission", "scheduled>processing@dispatch"]
        const consumed = { total: 3, reserved: 0, available: 3 }
        const released = { total: 5, reserved: 0, available: 5 }
        const reserved = { total: 5, reserved: 2, available: 3 }
        const outcome = (status: string, tail: ReadonlyArray<string>, balance: object, delivered: boolean) => ({
          status,
          transitions: [...head, ...tail],
          balance,
          submissions: 1,
          delivered
        })
        expect(observed).toEqual({
          delivered: outcome(
            "delivered",
            ["processing>accepted@provider", "accepted>delivered@receipt"],
            consumed,
            true
          ),
          undeliverable: outcome(
            "undeliverable",
            ["processing>accepted@provider", "accepted>undeliverable@receipt"],
            consumed,
            true
          ),
          rejected: outcome("failed", ["processing>failed@provider"], released, false),
          unknownThenAccepted: outcome(
            "delivered",
            ["processing>unknown@provider", "unknown>accepted@verification", "accepted>delivered@receipt"],
            consumed,
            true
          ),
          unreachable: outcome("failed", ["processing>failed@provider"], released, false),
          acceptedNoReceipt: outcome("accepted", ["processing>accepted@provider"], consumed, false),
          slow: outcome("delivered", ["processing>accepted@provider", "accepted>delivered@receipt"], consumed, true),
          unknownNeverReceived: outcome(
            "failed",
            ["processing>unknown@provider", "unknown>failed@verification"],
            released,
            false
          ),
          unknownForGood: outcome("unknown", ["processing>unknown@provider"], reserved, false)
        })

        // dispatched at send_at; receipts receiptDelay after acceptance; verification one interval after unknown
        expect(snaps.delivered!.at).toEqual([0, dueIn, dueIn, dueIn + receiptDelay])
        expect(snaps.delivered!.deliveryTime).toBe(dueIn + receiptDelay)
        // the slow number's answer takes slowMs of the provider's (real) time, not the service's clock
        expect(snaps.slow!.at).toEqual([0, dueIn, dueIn, dueIn + receiptDelay])
        const verified = snaps.unknownThenAccepted!
        expect(verified.at[3]! - verified.at[2]!).toBe(verifyIntervalMs)
        expect(verified.at[4]! - verified.at[3]!).toBe(receiptDelay)
        expect(count(app.calls.queries, sent.find((m) => m.name === "unknownForGood")!.id)).toBeGreaterThanOrEqual(3)
      })
  )

  it.effect("an immediate send answered unknown is verified later; the stored answer stays the first 502", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 4 })
      const a = yield* create(apiKey, { to: testNumbers.unknownThenAccepted, text: "four" })
      const b = yield* create(apiKey, { to: testNumbers.unknownNeverReceived, text: "eight" })
      expect([a.reply.status, b.reply.status]).toEqual([502, 502])
      expect(yield* balanceOf(orgId)).toEqual({ total: 4, reserved: 2, available: 2 })

      yield* app.advance(verifyIntervalMs + receiptDelay)
      const start = yield* app.now
      expect((yield* snapshot(orgId, apiKey, a.id, start)).transitions).toEqual([
        "->processing@admission",
        "processing>unknown@provider",
        "unknown>accepted@verification",
        "accepted>delivered@receipt"
      ])
      expect((yield* snapshot(orgId, apiKey, b.id, start)).transitions).toEqual([
        "->processing@admission",
        "processing>unknown@provider",
        "unknown>failed@verification"
      ])
      expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 0, available: 3 })
      expect([count(app.calls.submits, a.id), count(app.calls.submits, b.id)]).toEqual([1, 1])
      // docs/decisions.md#idempotency: replayed as first answered
      for (const m of [a, b]) {
        const again = yield* app.call("POST", messagesPath, {
          token: apiKey,
          body: bodyOf({
            to: m === a ? testNumbers.unknownThenAccepted : testNumbers.unknownNeverReceived,
            text: m === a ? "four" : "eight"
          }),
          headers: { "idempotency-key": m.key }
        })
        expect({ status: again.status, body: again.body }).toEqual({ status: m.reply.status, body: m.reply.body })
        expect(again.headers.get("idempotent-replayed")).toBe("true")
      }
    })
  )

  it.effect("unknown is never resubmitted: one submission across many verification rounds, credits stay reserved", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 3 })
      const { id, reply } = yield* create(apiKey, { to: testNumbers.unknownForGood, text: twoSegments })
      expect(reply.status).toBe(502)
      yield* app.advance(5 * 60_000)
      expect(count(app.calls.submits, id)).toBe(1)
      // the verifier did ask, many times (gaps doubling from the interval: 1 s, 2 s, 4 s ...)
      expect(count(app.calls.queries, id)).toBeGreaterThanOrEqual(6)
      const attempts = yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ verifyAttempts: number }>`SELECT verify_attempts FROM messages WHERE id = ${id}`
        return row!.verifyAttempts
      })
      expect(attempts).toBe(count(app.calls.queries, id))
      expect((yield* snapshot(orgId, apiKey, id, 0)).transitions).toEqual([
        "->processing@admission",
        "processing>unknown@provider"
      ])
      expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 2, available: 1 })
    })
  )

  it.effect("a sender deactivated before due time: blocked at send_at, credits released, never submitted", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
      expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: true })).status).toBe(200)
      const start = yield* app.now
      const c = { to: ordinary, text: twoSegments, sender_name: "PROMO", sendAt: start + 20_000 }
      const { id, reply, key } = yield* create(apiKey, c)
      expect(reply.status).toBe(202)
      yield* app.advance(5_000)
      expect((yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: false })).status).toBe(200)
      yield* app.advanceTo(start + 20_000 - 1)
      expect(yield* statusOf(apiKey, id)).toBe("scheduled")
      yield* app.advance(10_001)
      expect(count(app.calls.submits, id)).toBe(0)
      expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 0, available: 5 })
      // the scheduled creation's stored answer is its 202 (replays are as first answered)
      const again = yield* app.call("POST", messagesPath, {
        token: apiKey,
        body: bodyOf(c),
        headers: { "idempotency-key": key }
      })
      expect({ status: again.status, body: again.body }).toEqual({ status: 202, body: reply.body })
      // docs/decisions.md#message-states: scheduled -> blocked at due time (the message never was in submission)
      const snap = yield* snapshot(orgId, apiKey, id, start)
      expect(snap.transitions).toEqual(["->scheduled@admission", "scheduled>blocked@dispatch"])
      expect(snap.at.at(-1)).toBe(20_000)
    })
  )

  it.effect("an organisation with SMS disabled at due time: failed at send_at, credits released, never submitted", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
      const start = yield* app.now
      const { id } = yield* create(apiKey, { to: ordinary, text: "off", sendAt: start + 15_000 })
      expect((yield* app.admin("PATCH", `/organizations/${orgId}`, { sms_enabled: false })).status).toBe(200)
      yield* app.advanceTo(start + 15_000 - 1)
      expect(yield* statusOf(apiKey, id)).toBe("scheduled")
      yield* app.advance(5_001)
      expect(count(app.calls.submits, id)).toBe(0)
      expect(yield* balanceOf(orgId)).toEqual({ total: 5, reserved: 0, available: 5 })
      const snap = yield* snapshot(orgId, apiKey, id, start)
      // docs/decisions.md#message-states: scheduled -> failed at due time
      expect(snap.transitions).toEqual(["->scheduled@admission", "scheduled>failed@dispatch"])
      expect(snap.at.at(-1)).toBe(15_000)
    })
  )

  it.effect(
    "recovery: a dead process's message becomes failed (never handed over) or unknown (maybe sent) once its lease runs out; verification then settles what the provider knows",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const start = yield* app.now
        const deadWorker = crypto.randomUUID()

        yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql`INSERT INTO workers (id, started_at, lease_until, pid) VALUES (${deadWorker}, ${new Date(start)}, ${new Date(start + leaseTtlMs)}, 0)`
        )
        // a process with a live lease (until `leaseTtlMs` from now) admitted each and died
        const crashed = (to: string, key: string, crash: Crash) =>
          leftProcessing(orgId, deadWorker, new Date(start), to, key, crash)

        const beforeMark = yield* crashed(testNumbers.delivered, "crash-before-mark", "beforeMark")
        const beforeCall = yield* crashed(ordinary, "crash-before-call", "beforeCall")
        const afterCall = yield* crashed(ordinary, "crash-after-call", "afterCall")
        const afterCallUnknown = yield* crashed(testNumbers.unknownForGood, "crash-after-call-09", "afterCall")
        const all = [beforeMark, beforeCall, afterCall, afterCallUnknown]
        expect(yield* balanceOf(orgId)).toEqual({ total: 10, reserved: 8, available: 2 })
        const retry = (m: typeof beforeMark) =>
          app.call("POST", messagesPath, { token: apiKey, body: bodyOf(m.c), headers: { "idempotency-key": m.key } })

        // while the dead process's lease lasts, its messages are left alone and an identical retry is told to wait
        yield* app.advanceTo(start + leaseTtlMs - 1)
        expect(
          yield* Effect.all(
            all.map((m) => statusOf(apiKey, m.id)),
            { concurrency: "unbounded" }
          )
        ).toEqual(["processing", "processing", "processing", "processing"])
        const waiting = yield* retry(beforeMark)
        expect({ status: waiting.status, code: waiting.body.error.code }).toEqual({
          status: 409,
          code: "idempotency_in_progress"
        })

        // once it has run out (the clock moved without running any work), an identical retry recovers
        // its message at once and replays the settled answer
        yield* app.moveClock(start + leaseTtlMs + 1 - (yield* app.now))
        const recovered = yield* retry(beforeMark)
        expect({ status: recovered.status, code: recovered.body.error.code, id: recovered.body.message_id }).toEqual({
          status: 503,
          code: "dispatch_unavailable",
          id: beforeMark.id
        })
        expect(recovered.headers.get("idempotent-replayed")).toBe("true")

        // the others are recovered by the next round of work, then verified
        yield* app.advance(5 * verifyIntervalMs)
        const snaps = yield* Effect.all(
          all.map((m) => snapshot(orgId, apiKey, m.id, start)),
          { concurrency: "unbounded" }
        )
        expect(snaps.map((s) => s.transitions)).toEqual([
          ["->processing@admission", "processing>failed@recovery"],
          ["->processing@admission", "processing>unknown@recovery", "unknown>failed@verification"],
          // the provider's receipt came while the message was still processing: kept, and applied once verified
          [
            "->processing@admission",
            "processing>unknown@recovery",
            "unknown>accepted@verification",
            "accepted>delivered@receipt"
          ],
          ["->processing@admission", "processing>unknown@recovery"]
        ])
        for (const snap of snaps) expect(snap.at[1]).toBeGreaterThan(leaseTtlMs)

        // never handed over: released; not received: released after verification; received: consumed; unknown: kept
        expect(yield* balanceOf(orgId)).toEqual({ total: 8, reserved: 2, available: 6 })
        // recovery and verification never submit: only the calls made before the crashes
        expect(all.map((m) => count(app.calls.submits, m.id))).toEqual([0, 0, 1, 1])

        // docs/decisions.md#idempotency: no key is stuck; each replays the matching answer with its message_id
        const replays = yield* Effect.all(all.map(retry), { concurrency: "unbounded" })
        expect(replays.map((r) => [r.status, r.body.error?.code, r.body.message_id])).toEqual([
          [503, "dispatch_unavailable", beforeMark.id],
          [502, "provider_result_unknown", beforeCall.id],
          [502, "provider_result_unknown", afterCall.id],
          [502, "provider_result_unknown", afterCallUnknown.id]
        ])
      })
  )

  it.effect(
    "this process's own message left processing by work that ended without settling it (a commit whose answer was lost): recovered at once, never while the work goes on",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const start = yield* app.now
        const lease = yield* ProcessLease
        const left = (to: string, key: string, crash: Crash) =>
          leftProcessing(orgId, lease.workerId, new Date(start), to, key, crash)
        const lost = yield* left(testNumbers.delivered, "own-lost-admission", "beforeMark")
        const lostAfterMark = yield* left(ordinary, "own-lost-after-mark", "beforeCall")
        // one this process is still working on, until `finish`
        const busy = yield* left(ordinary, "own-busy", "beforeMark")
        let finish!: () => void
        const finished = new Promise<void>((resolve) => (finish = resolve))
        const working = yield* Effect.forkChild(
          lease.working(
            busy.id,
            Effect.promise(() => finished)
          )
        )
        const retry = (m: typeof lost) =>
          app.call("POST", messagesPath, { token: apiKey, body: bodyOf(m.c), headers: { "idempotency-key": m.key } })

        // no lease to wait for: an identical retry recovers it at once and replays the settled answer
        const recovered = yield* retry(lost)
        expect({
          status: recovered.status,
          code: recovered.body.error.code,
          id: recovered.body.message_id,
          replayed: recovered.headers.get("idempotent-replayed")
        }).toEqual({ status: 503, code: "dispatch_unavailable", id: lost.id, replayed: "true" })
        const waiting = yield* retry(busy)
        expect({ status: waiting.status, code: waiting.body.error.code }).toEqual({
          status: 409,
          code: "idempotency_in_progress"
        })

        // the next round of work recovers the other; the one being worked on stays processing
        yield* app.advance(5 * verifyIntervalMs)
        expect((yield* snapshot(orgId, apiKey, lostAfterMark.id, start)).transitions).toEqual([
          "->processing@admission",
          "processing>unknown@recovery",
          "unknown>failed@verification"
        ])
        expect(yield* statusOf(apiKey, busy.id)).toBe("processing")

        // once its work ends without an outcome, it is recovered too
        finish()
        yield* Fiber.join(working)
        yield* app.advance(verifyIntervalMs)
        expect((yield* snapshot(orgId, apiKey, busy.id, start)).transitions).toEqual([
          "->processing@admission",
          "processing>failed@recovery"
        ])
        expect([lost, lostAfterMark, busy].map((m) => count(app.calls.submits, m.id))).toEqual([0, 0, 0])
        expect(yield* balanceOf(orgId)).toEqual({ total: 10, reserved: 0, available: 10 })
      })
  )

  it.effect(
    "a claim that starts messages: this process's own rows wait while it runs, and what it started is work until its dispatch ends",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const lease = yield* ProcessLease
        const recovery = yield* Recovery
        // a message left processing by this process, as a claim that starts messages leaves one before it counts it
        const started = yield* leftProcessing(
          orgId,
          lease.workerId,
          new Date(yield* app.now),
          ordinary,
          "own-started-by-a-claim",
          "beforeMark"
        )
        const [begun, answer] = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
        const claim = yield* Effect.forkChild(
          lease.starting(
            Deferred.succeed(begun, undefined).pipe(
              Effect.andThen(Deferred.await(answer)),
              Effect.as([{ id: started.id }])
            )
          )
        )
        yield* Deferred.await(begun)
        expect(yield* recovery.recoverAbandoned, "recovered while the claim that started it had not answered").toBe(0)
        yield* Deferred.succeed(answer, undefined)
        yield* Fiber.join(claim)
        expect(yield* recovery.recoverAbandoned, "recovered while counted as work").toBe(0)
        yield* lease.resume(started.id, Effect.void)
        expect(yield* recovery.recoverAbandoned, "recovered once its work ended without an outcome").toBe(1)
        expect(yield* statusOf(apiKey, started.id)).toBe("failed")
      })
  )

  it.effect(
    "receipts: repeats and receipts for final messages change nothing and are removed, one for an accepted message applies, an unmatched one is kept pending",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const delivered = yield* create(apiKey, { to: testNumbers.delivered, text: "one" })
        const failed = yield* create(apiKey, { to: testNumbers.rejected, text: "three" })
        const undeliverable = yield* create(apiKey, { to: testNumbers.undeliverable, text: "two" })
        const accepted = yield* create(apiKey, { to: testNumbers.acceptedNoReceipt, text: "six" })
        yield* app.advance(receiptDelay + 1_000)
        const start = yield* app.now
        const final = [delivered, failed, undeliverable]
        const before = yield* Effect.all(
          final.map((m) => snapshot(orgId, apiKey, m.id, start)),
          { concurrency: "unbounded" }
        )
        const balance = yield* balanceOf(orgId)
        expect(before.map((s) => s.status)).toEqual(["delivered", "failed", "undeliverable"])

        const at = new Date(start + 1)
        const receipt = (id: string, outcome: "delivered" | "undeliverable") => ({
          providerRef: `sim:${id}`,
          outcome,
          occurredAt: at,
          recipient: null,
          submittedAt: null
        })
        const unmatched = `sim:${crypto.randomUUID()}`
        yield* Effect.gen(function* () {
          const inbox = yield* ProviderInbox
          for (const r of [
            receipt(delivered.id, "delivered"),
            receipt(delivered.id, "undeliverable"),
            receipt(undeliverable.id, "delivered"),
            receipt(failed.id, "delivered"),
            receipt(accepted.id, "delivered"),
            receipt(accepted.id, "delivered"),
            {
              providerRef: unmatched,
              outcome: "delivered" as const,
              occurredAt: at,
              recipient: null,
              submittedAt: null
            }
          ])
            yield* inbox.receipt(r)
        })
        yield* app.advance(1_000)

        expect(
          yield* Effect.all(
            final.map((m) => snapshot(orgId, apiKey, m.id, start)),
            { concurrency: "unbounded" }
          )
        ).toEqual(before)
        expect(yield* balanceOf(orgId)).toEqual(balance)
        const control = yield* snapshot(orgId, apiKey, accepted.id, start)
        expect(control.transitions.at(-1)).toBe("accepted>delivered@receipt")
        expect(control.transitions.filter((t) => t.endsWith("@receipt"))).toHaveLength(1)
        expect(control.deliveryTime).toBe(1)
        const stored = yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{
            providerRef: string
            outcome: string
            state: string
          }>`SELECT provider_ref, outcome, state FROM provider_receipts
          WHERE provider_ref = ANY(${[delivered.id, failed.id, undeliverable.id, accepted.id].map((id) => `sim:${id}`).concat(unmatched)}::text[])
          ORDER BY provider_ref, outcome`
        })
        const stateOf = (ref: string, outcome: string) =>
          stored.find((r) => r.providerRef === ref && r.outcome === outcome)?.state
        // the accepted message's receipt lives on in its message (applied, not kept); its repeat was ignored, like the receipts of final messages
        expect(stored.filter((r) => r.providerRef === `sim:${accepted.id}`)).toEqual([])
        expect(stateOf(`sim:${delivered.id}`, "undeliverable")).toBeUndefined()
        // the simulator never accepted the refused message: no message has that reference, so it waits, kept
        expect(stateOf(`sim:${failed.id}`, "delivered")).toBe("pending")
        expect(stateOf(unmatched, "delivered")).toBe("pending")
      })
  )
})
