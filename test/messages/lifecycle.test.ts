/**
 * The background fibers under a TestClock (CONTRACT 3, 4, 5, 7; spec 3): the dispatcher submits
 * scheduled messages at their send time and once only, each simulator number reaches its final
 * status with its ledger effect, `unknown` is verified and never resubmitted, unavailable senders
 * and organisations stop a due message, recovery settles messages a dead process left in
 * `processing`, and receipts for final messages are ignored. No HTTP: services and workers over
 * the database, see test/support/WorkersHarness.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Queue } from "effect"
import { SqlClient } from "effect/sql"
import { testNumbers } from "../../simulator/Simulator.ts"
import { recoveryIntervalMs } from "../../src/dispatch/Workers.ts"
import { staleProcessingMs } from "../../src/dispatch/WorkSteps.ts"
import { countSegments } from "../../src/domain/Segments.ts"
import { Provider } from "../../src/dispatch/Provider.ts"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { Organisations } from "../../src/organisations/Organisations.ts"
import {
  advance,
  advanceTo,
  advanceUntil,
  backend,
  balanceOf,
  bodyOf,
  clockNow,
  create,
  eventually,
  inWorld,
  liveSleep,
  newOrg,
  replay,
  sharedDb,
  snapshot,
  statusOf,
  verifyAttempts,
  workersConfig
} from "../support/WorkersHarness.ts"

const ordinary = "+261341234567"
const twoSegments = "b".repeat(200)
const receiptDelay = workersConfig.simulatorReceiptDelayMs
const slowMs = workersConfig.simulatorSlowMs

const count = (counts: Map<string, number>, id: string) => counts.get(id) ?? 0

layer(sharedDb("lifecycle"), { excludeTestServices: true, timeout: 60_000 })(`background fibers (${backend})`, (it) => {
  it.effect("a scheduled message is not submitted before send_at, then exactly once at send_at", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const org = yield* newOrg(5)
        const sendAt = base + 10_000
        const { id, answer } = yield* create(org, { to: ordinary, text: "at ten", sendAt })
        expect(answer.status).toBe(202)
        expect(yield* balanceOf(org)).toEqual({ total: 5, reserved: 1, available: 4 })

        yield* advanceTo(sendAt - 1)
        yield* liveSleep(200)
        expect(count(probe.submissions, id)).toBe(0)
        expect(yield* statusOf(org, id)).toBe("scheduled")

        yield* advance(1)
        yield* eventually(statusOf(org, id), (s) => s === "accepted", 5000, "acceptance at send_at")
        expect(count(probe.submissions, id)).toBe(1)

        // the receipt comes receiptDelay later; then much more time passes without a second send
        yield* advanceUntil(statusOf(org, id), (s) => s === "delivered", { maxMs: 10_000, what: "delivery" })
        yield* advance(30_000, 1000)
        expect(count(probe.submissions, id)).toBe(1)
        expect(yield* snapshot(org, id, base)).toEqual({
          status: "delivered",
          deliveryTime: 10_000 + receiptDelay,
          transitions: ["->scheduled@admission", "scheduled>processing@dispatch", "processing>accepted@provider", "accepted>delivered@receipt"],
          at: [0, 10_000, 10_000, 10_000 + receiptDelay]
        })
        expect(yield* balanceOf(org)).toEqual({ total: 4, reserved: 0, available: 4 })
      })))

  it.effect("each simulator number, scheduled: its final status, timeline and ledger effect, one submission each", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const dueIn = 5_000
        const numbers = Object.entries(testNumbers)
        const sent: Array<{ name: string; org: string; id: string }> = []
        for (const [name, to] of numbers) {
          const org = yield* newOrg(5)
          const { id } = yield* create(org, { to, text: twoSegments, sendAt: base + dueIn })
          sent.push({ name, org, id })
        }
        const settled: Record<string, string> = {
          delivered: "delivered",
          undeliverable: "undeliverable",
          rejected: "failed",
          unknownThenAccepted: "delivered",
          unreachable: "failed",
          acceptedNoReceipt: "accepted",
          slow: "delivered",
          unknownNeverReceived: "failed",
          unknownForGood: "unknown"
        }
        const statuses = Effect.forEach(sent, (m) => Effect.map(statusOf(m.org, m.id), (s) => [m.name, s] as const))
        yield* advanceUntil(statuses, (all) => all.every(([name, s]) => settled[name] === s), {
          maxMs: 60_000,
          what: "every final status"
        })
        // well past every receipt and several verification rounds: nothing moves any more
        yield* advance(60_000, 1000)

        const observed: Record<string, unknown> = {}
        for (const m of sent) {
          const snap = yield* snapshot(m.org, m.id, base)
          observed[m.name] = {
            status: snap.status,
            transitions: snap.transitions,
            balance: yield* balanceOf(m.org),
            submissions: count(probe.submissions, m.id),
            delivered: snap.deliveryTime !== null
          }
        }
        const head = ["->scheduled@admission", "scheduled>processing@dispatch"]
        const consumed = { total: 3, reserved: 0, available: 3 }
        const released = { total: 5, reserved: 0, available: 5 }
        const reserved = { total: 5, reserved: 2, available: 3 }
        expect(observed).toEqual({
          delivered: {
            status: "delivered",
            transitions: [...head, "processing>accepted@provider", "accepted>delivered@receipt"],
            balance: consumed,
            submissions: 1,
            delivered: true
          },
          undeliverable: {
            status: "undeliverable",
            transitions: [...head, "processing>accepted@provider", "accepted>undeliverable@receipt"],
            balance: consumed,
            submissions: 1,
            delivered: true
          },
          rejected: {
            status: "failed",
            transitions: [...head, "processing>failed@provider"],
            balance: released,
            submissions: 1,
            delivered: false
          },
          unknownThenAccepted: {
            status: "delivered",
            transitions: [...head, "processing>unknown@provider", "unknown>accepted@verification", "accepted>delivered@receipt"],
            balance: consumed,
            submissions: 1,
            delivered: true
          },
          unreachable: {
            status: "failed",
            transitions: [...head, "processing>failed@provider"],
            balance: released,
            submissions: 1,
            delivered: false
          },
          acceptedNoReceipt: {
            status: "accepted",
            transitions: [...head, "processing>accepted@provider"],
            balance: consumed,
            submissions: 1,
            delivered: false
          },
          slow: {
            status: "delivered",
            transitions: [...head, "processing>accepted@provider", "accepted>delivered@receipt"],
            balance: consumed,
            submissions: 1,
            delivered: true
          },
          unknownNeverReceived: {
            status: "failed",
            transitions: [...head, "processing>unknown@provider", "unknown>failed@verification"],
            balance: released,
            submissions: 1,
            delivered: false
          },
          unknownForGood: {
            status: "unknown",
            transitions: [...head, "processing>unknown@provider"],
            balance: reserved,
            submissions: 1,
            delivered: false
          }
        })

        // instants: dispatched at send_at; the slow number accepted slowMs later; receipts receiptDelay after acceptance
        const byName = Object.fromEntries(sent.map((m) => [m.name, m]))
        const slow = yield* snapshot(byName.slow!.org, byName.slow!.id, base)
        expect(slow.at).toEqual([0, dueIn, dueIn + slowMs, dueIn + slowMs + receiptDelay])
        expect(slow.deliveryTime).toBe(dueIn + slowMs + receiptDelay)
        const delivered = yield* snapshot(byName.delivered!.org, byName.delivered!.id, base)
        expect(delivered.at).toEqual([0, dueIn, dueIn, dueIn + receiptDelay])
        // verification happens no earlier than one verify interval after the unknown answer
        const verified = yield* snapshot(byName.unknownThenAccepted!.org, byName.unknownThenAccepted!.id, base)
        expect(verified.at[3]! - verified.at[2]!).toBeGreaterThanOrEqual(workersConfig.verifyIntervalMs)
        expect(verified.at[4]! - verified.at[3]!).toBe(receiptDelay)
        expect(count(probe.statusQueries, byName.unknownForGood!.id)).toBeGreaterThanOrEqual(3)
      })))

  it.effect("an immediate send answered unknown is verified later; the stored answer stays the first 502", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const org = yield* newOrg(4)
        const accepted = { to: testNumbers.unknownThenAccepted, text: "four", key: "imm-04" }
        const neverReceived = { to: testNumbers.unknownNeverReceived, text: "eight", key: "imm-08" }
        const a = yield* create(org, accepted)
        const b = yield* create(org, neverReceived)
        expect([a.answer.status, b.answer.status]).toEqual([502, 502])
        expect(yield* balanceOf(org)).toEqual({ total: 4, reserved: 2, available: 2 })

        yield* advanceUntil(
          Effect.all([statusOf(org, a.id), statusOf(org, b.id)]),
          ([x, y]) => x === "delivered" && y === "failed",
          { maxMs: 30_000, what: "verification" }
        )
        expect((yield* snapshot(org, a.id, base)).transitions).toEqual([
          "->processing@admission",
          "processing>unknown@provider",
          "unknown>accepted@verification",
          "accepted>delivered@receipt"
        ])
        expect((yield* snapshot(org, b.id, base)).transitions).toEqual([
          "->processing@admission",
          "processing>unknown@provider",
          "unknown>failed@verification"
        ])
        expect(yield* balanceOf(org)).toEqual({ total: 3, reserved: 0, available: 3 })
        expect([count(probe.submissions, a.id), count(probe.submissions, b.id)]).toEqual([1, 1])
        // CONTRACT 4: replayed as first answered
        for (const [c, first] of [[accepted, a.answer], [neverReceived, b.answer]] as const) {
          const again = yield* replay(org, c)
          expect(again).toEqual({ _tag: "Replay", answer: first })
        }
      })))

  it.effect("unknown is never resubmitted: one submission across many verification rounds, credits stay reserved", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const org = yield* newOrg(3)
        const { id, answer } = yield* create(org, { to: testNumbers.unknownForGood, text: twoSegments })
        expect(answer.status).toBe(502)
        yield* advance(5 * 60_000, 2000)
        yield* liveSleep(50)
        expect(count(probe.submissions, id)).toBe(1)
        // the verifier did ask, many times (backoff: 1 s, 2 s, 4 s ... capped at 64 s)
        expect(count(probe.statusQueries, id)).toBeGreaterThanOrEqual(6)
        expect(yield* verifyAttempts(org, id)).toBe(count(probe.statusQueries, id))
        expect(yield* snapshot(org, id, base)).toMatchObject({
          status: "unknown",
          transitions: ["->processing@admission", "processing>unknown@provider"]
        })
        expect(yield* balanceOf(org)).toEqual({ total: 3, reserved: 2, available: 1 })
      })))

  it.effect("a sender deactivated before due time: blocked at send_at, credits released, never submitted", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const org = yield* newOrg(5)
        const orgs = yield* Organisations
        yield* orgs.setSender(org, "PROMO", true)
        const c = { to: ordinary, text: twoSegments, senderName: "PROMO", sendAt: base + 20_000, key: "blocked-1" }
        const { id, answer } = yield* create(org, c)
        expect(answer.status).toBe(202)
        yield* advance(5_000)
        yield* orgs.setSender(org, "PROMO", false)
        yield* advanceTo(base + 20_000 - 1)
        yield* liveSleep(100)
        expect(yield* statusOf(org, id)).toBe("scheduled")
        yield* advance(1)
        yield* eventually(statusOf(org, id), (s) => s === "blocked", 5000, "blocked at send_at")
        yield* advance(10_000, 1000)
        expect(count(probe.submissions, id)).toBe(0)
        expect(yield* balanceOf(org)).toEqual({ total: 5, reserved: 0, available: 5 })
        // the scheduled creation's stored answer is its 202 (replays are as first answered)
        expect(yield* replay(org, c)).toEqual({ _tag: "Replay", answer })
        // CONTRACT 7: scheduled -> blocked at due time (the message never was in submission)
        const snap = yield* snapshot(org, id, base)
        expect(snap.transitions.at(-1)).toMatch(/>blocked@dispatch$/)
        expect(snap.at.at(-1)).toBe(20_000)
        expect(snap.transitions).toEqual(["->scheduled@admission", "scheduled>blocked@dispatch"])
      })))

  it.effect("an organisation with SMS disabled at due time: failed at send_at, credits released, never submitted", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const org = yield* newOrg(5)
        const { id } = yield* create(org, { to: ordinary, text: "off", sendAt: base + 15_000 })
        yield* (yield* Organisations).update(org, { smsEnabled: false })
        yield* advanceTo(base + 15_000 - 1)
        yield* liveSleep(100)
        expect(yield* statusOf(org, id)).toBe("scheduled")
        yield* advance(1)
        yield* eventually(statusOf(org, id), (s) => s !== "scheduled" && s !== "processing", 5000, "settlement at send_at")
        yield* advance(5_000, 1000)
        expect(yield* statusOf(org, id)).toBe("failed")
        expect(count(probe.submissions, id)).toBe(0)
        expect(yield* balanceOf(org)).toEqual({ total: 5, reserved: 0, available: 5 })
        const snap = yield* snapshot(org, id, base)
        expect(snap.transitions.at(-1)).toMatch(/>failed@dispatch$/)
        expect(snap.at.at(-1)).toBe(15_000)
        // CONTRACT 7: scheduled -> failed at due time
        expect(snap.transitions).toEqual(["->scheduled@admission", "scheduled>failed@dispatch"])
      })))

  it.effect("recovery: a message left in processing becomes failed (never handed over) or unknown (maybe sent) after the stale threshold; verification then settles what the provider knows", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const store = yield* MessageStore
        const ledger = yield* Ledger
        const idempotency = yield* Idempotency
        const provider = yield* Provider
        const org = yield* newOrg(10)

        /**
         * The admission transaction of an immediate send (claim, message, reservation), then a
         * "crash" at `crash`: before `markSubmitted`; after it but before the provider got the
         * message; or after the provider's answer but before settlement.
         */
        const crashed = (to: string, key: string, crash: "beforeMark" | "beforeCall" | "afterCall") =>
          Effect.gen(function*() {
            const id = crypto.randomUUID()
            const at = new Date(yield* clockNow)
            const c = { to, text: twoSegments, key }
            const row = {
              id,
              batchId: null,
              batchPosition: null,
              toNumber: to,
              senderName: "INFO",
              text: c.text,
              segments: countSegments(c.text).segments,
              status: "processing" as const,
              sendAt: null
            }
            yield* Effect.gen(function*() {
              const claim = yield* idempotency.claim(org, "messages", key, idempotency.fingerprint("messages", bodyOf(c)), { messageId: id }, at)
              expect(claim._tag).toBe("New")
              yield* store.insert(org, [row], at)
              yield* ledger.reserve(org, [{ messageId: id, credits: row.segments }])
            }).pipe(sql.withTransaction)
            if (crash !== "beforeMark") yield* store.markSubmitted(org, [id], at)
            if (crash === "afterCall") {
              yield* provider.submit({ organisationId: org, messageId: id, to, senderName: "INFO", text: c.text, segments: row.segments })
            }
            return { id, c }
          })

        const beforeMark = yield* crashed(testNumbers.delivered, "crash-before-mark", "beforeMark")
        const beforeCall = yield* crashed(ordinary, "crash-before-call", "beforeCall")
        const afterCall = yield* crashed(ordinary, "crash-after-call", "afterCall")
        const afterCallUnknown = yield* crashed(testNumbers.unknownForGood, "crash-after-call-09", "afterCall")
        const all = [beforeMark, beforeCall, afterCall, afterCallUnknown]
        expect(yield* balanceOf(org)).toEqual({ total: 10, reserved: 8, available: 2 })
        // while the key is held, an identical retry is told to wait
        const inProgress = yield* replay(org, beforeMark.c).pipe(Effect.flip)
        expect(inProgress._tag).toBe("IdempotencyInProgress")

        // not before the stale threshold
        yield* advanceTo(base + staleProcessingMs - 1, 1000)
        yield* liveSleep(100)
        expect(yield* Effect.forEach(all, (m) => statusOf(org, m.id))).toEqual(["processing", "processing", "processing", "processing"])

        const settled = ["failed", "failed", "accepted", "unknown"]
        const snapshots = Effect.forEach(all, (m) => snapshot(org, m.id, base))
        yield* advanceUntil(snapshots, (snaps) => snaps.every((x, i) => x.status === settled[i] && x.transitions.length > 1), {
          maxMs: recoveryIntervalMs + 40_000,
          stepMs: 1000,
          what: "recovery and verification"
        })
        yield* advance(20_000, 1000)

        const [a, b, c, d] = yield* snapshots
        expect([a!.transitions, b!.transitions, c!.transitions, d!.transitions]).toEqual([
          ["->processing@admission", "processing>failed@recovery"],
          ["->processing@admission", "processing>unknown@recovery", "unknown>failed@verification"],
          ["->processing@admission", "processing>unknown@recovery", "unknown>accepted@verification"],
          ["->processing@admission", "processing>unknown@recovery"]
        ])
        for (const snap of [a!, b!, c!, d!]) {
          expect(snap.at[1]).toBeGreaterThanOrEqual(staleProcessingMs)
          expect(snap.at[1]).toBeLessThanOrEqual(staleProcessingMs + recoveryIntervalMs + 2000)
        }

        // never handed over: released; not received: released after verification; received: consumed; unknown: kept
        expect(yield* balanceOf(org)).toEqual({ total: 8, reserved: 2, available: 6 })
        // recovery and verification never submit: only the calls made before the crashes
        expect(all.map((m) => count(probe.submissions, m.id))).toEqual([0, 0, 1, 1])

        // CONTRACT 4: the key is no longer stuck; it replays the matching answer with message_id
        const replays = yield* Effect.forEach(all, (m) => replay(org, m.c))
        type Failure = { readonly error?: { readonly code?: string }; readonly message_id?: string }
        expect(replays.map((r) => r._tag === "Replay" ? [r.answer.status, (r.answer.body as Failure).error?.code, (r.answer.body as Failure).message_id] : r))
          .toEqual([
            [503, "dispatch_unavailable", beforeMark.id],
            [502, "provider_result_unknown", beforeCall.id],
            [502, "provider_result_unknown", afterCall.id],
            [502, "provider_result_unknown", afterCallUnknown.id]
          ])
      })))

  it.effect("receipts for final messages are ignored; a receipt for an accepted message applies", () =>
    inWorld(({ probe, base }) =>
      Effect.gen(function*() {
        const org = yield* newOrg(10)
        const delivered = yield* create(org, { to: testNumbers.delivered, text: "one" })
        const failed = yield* create(org, { to: testNumbers.rejected, text: "three" })
        const undeliverable = yield* create(org, { to: testNumbers.undeliverable, text: "two" })
        const accepted = yield* create(org, { to: testNumbers.acceptedNoReceipt, text: "six" })
        yield* advanceUntil(
          Effect.all([statusOf(org, delivered.id), statusOf(org, undeliverable.id)]),
          ([a, b]) => a === "delivered" && b === "undeliverable",
          { maxMs: 10_000, what: "receipts" }
        )
        yield* advance(3_000)
        const before = yield* Effect.forEach([delivered, failed, undeliverable], (m) => snapshot(org, m.id, base))
        const balance = yield* balanceOf(org)
        expect(before.map((s) => s.deliveryTime)).toEqual([receiptDelay, null, receiptDelay])

        const at = new Date((yield* clockNow) + 1)
        const receipt = (messageId: string, outcome: "delivered" | "undeliverable") => ({ organisationId: org, messageId, outcome, at })
        yield* Queue.offerAll(probe.receipts, [
          receipt(delivered.id, "delivered"),
          receipt(delivered.id, "undeliverable"),
          receipt(undeliverable.id, "delivered"),
          receipt(failed.id, "delivered")
        ])
        yield* liveSleep(150)
        // a control: the same path applies a receipt to an accepted message
        yield* Queue.offer(probe.receipts, receipt(accepted.id, "delivered"))
        yield* eventually(statusOf(org, accepted.id), (s) => s === "delivered", 5000, "control receipt")
        yield* liveSleep(100)

        const after = yield* Effect.forEach([delivered, failed, undeliverable], (m) => snapshot(org, m.id, base))
        expect(after).toEqual(before)
        expect(yield* balanceOf(org)).toEqual(balance)
        const control = yield* snapshot(org, accepted.id, base)
        expect(control.transitions.at(-1)).toBe("accepted>delivered@receipt")
        expect(control.deliveryTime).toBe(at.getTime() - base)
      })))
})
