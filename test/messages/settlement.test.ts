/**
 * Settlement of provider outcomes at the level of the service (src/messages/Settlement.ts): for
 * every outcome and every status a message can be in, whether it moves and where to, what its
 * credits do, the timeline entry, the answer an immediate send gives and the one its key stores.
 * The expected table is written out here from CONTRACT sections 3 and 7, not read from the code.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { MessageStatuses, type MessageStatus } from "../../src/domain/MessageStatus.ts"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { type Outcome, Settlement } from "../../src/messages/Settlement.ts"
import { backend, makeTestApp } from "../support/TestApp.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

interface Expected {
  readonly from: ReadonlyArray<MessageStatus>
  readonly to: MessageStatus
  readonly credits: "consume" | "release" | "keep"
  readonly status: number
  readonly code: string | undefined
}

const expected: Record<Outcome["_tag"], Expected> = {
  Accepted: { from: ["processing", "unknown"], to: "accepted", credits: "consume", status: 201, code: undefined },
  Rejected: { from: ["processing", "unknown"], to: "failed", credits: "release", status: 502, code: "provider_rejected" },
  NeverSent: { from: ["processing", "unknown"], to: "failed", credits: "release", status: 503, code: "dispatch_unavailable" },
  Unknown: { from: ["processing"], to: "unknown", credits: "keep", status: 502, code: "provider_result_unknown" },
  NotReceived: { from: ["unknown"], to: "failed", credits: "release", status: 502, code: "provider_result_unknown" },
  SenderUnavailable: { from: ["scheduled", "processing"], to: "blocked", credits: "release", status: 403, code: "sender_name_unavailable" },
  SmsUnavailable: { from: ["scheduled", "processing"], to: "failed", credits: "release", status: 403, code: "sms_unavailable" }
}

const outcomeOf = (tag: Outcome["_tag"]): Outcome => (tag === "Accepted" ? { _tag: tag, providerRef: "ref-1" } : { _tag: tag })

/** A message of two segments in `status`, its credits reserved, its key (when immediate) in progress. */
const messageIn = (orgId: string, status: MessageStatus, sendAt: Date | null) =>
  app.run(Effect.gen(function*() {
    const id = randomUUID()
    const store = yield* MessageStore
    const at = new Date()
    yield* store.insert(orgId, [{
      id, batchId: null, batchPosition: null, toNumber: "+261340000001", senderName: "INFO", text: "settle me",
      segments: 2, status: "processing", sendAt, workerId: null
    }], at)
    yield* (yield* Ledger).reserve(orgId, [{ messageId: id, credits: 2 }])
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE messages SET status = ${status} WHERE organisation_id = ${orgId} AND id = ${id}`
    if (sendAt === null) {
      yield* (yield* Idempotency).claim(orgId, "messages", `settle-${id}`, "f", { messageId: id }, at)
    }
    return (yield* store.find(orgId, id))!
  }))

/** What is stored about the message after settlement. */
const factsOf = (orgId: string, id: string) =>
  app.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ status: string; providerMessageId: string | null; verifyAt: Date | null; updatedAt: Date }>`SELECT
        status, provider_message_id, verify_at, updated_at FROM messages WHERE organisation_id = ${orgId} AND id = ${id}`
    const holds = yield* sql<{ state: string }>`SELECT DISTINCT state FROM credit_holds
      WHERE organisation_id = ${orgId} AND message_id = ${id}`
    const events = yield* sql<{ fromStatus: string | null; toStatus: string; source: string }>`SELECT from_status, to_status, source
      FROM message_events WHERE organisation_id = ${orgId} AND message_id = ${id} ORDER BY id`
    const stored = yield* (yield* Idempotency).storedForMessage(orgId, id)
    return { ...row!, holds: holds.map((h) => h.state), events, stored, totals: yield* (yield* Ledger).totals(orgId) }
  }))

const holdStateAfter = { consume: "posted", release: "voided", keep: "pending" } as const

describe(`settlement of outcomes (${backend})`, () => {
  for (const tag of Object.keys(expected) as Array<Outcome["_tag"]>) {
    const plan = expected[tag]
    it(`${tag}: moves ${plan.from.join(" or ")} to ${plan.to} (${plan.credits}), leaves every other status alone`, async () => {
      const { orgId } = await app.newOrg({ credits: 2 * MessageStatuses.length })
      for (const status of MessageStatuses) {
        const message = await messageIn(orgId, status, null)
        const before = await factsOf(orgId, message.id)
        const answer = await app.run(Effect.flatMap(Settlement, (s) => s.settle(message, outcomeOf(tag), "provider")))
        const after = await factsOf(orgId, message.id)
        const moves = plan.from.includes(status)
        const label = `${tag} on ${status}`

        // the answer an immediate send gives: the plan's, or (not moved) none stored, so the plan's too
        expect(answer.status, label).toBe(plan.status)
        if (plan.code === undefined) {
          expect(answer.body, label).toMatchObject({ id: message.id, status: "accepted", to: "+261340000001", sender_name: "INFO" })
          expect(answer.location, label).toBe(`/api/sms/v2/messages/${message.id}/`)
        } else {
          expect(answer.body, label).toMatchObject({ error: { code: plan.code }, message_id: message.id })
          expect(answer.location, label).toBeNull()
        }

        if (!moves) {
          expect({ status: after.status, holds: after.holds, events: after.events.length, stored: after.stored }, label)
            .toEqual({ status, holds: before.holds, events: before.events.length, stored: undefined })
          continue
        }
        expect(after.status, label).toBe(plan.to)
        expect(after.holds, label).toEqual([holdStateAfter[plan.credits]])
        expect(after.events.at(-1), label).toEqual({ fromStatus: status, toStatus: plan.to, source: "provider" })
        expect(after.events, label).toHaveLength(before.events.length + 1)
        expect(after.stored, `${label}: the key's stored answer`).toEqual(answer)
        expect(after.providerMessageId, label).toBe(tag === "Accepted" ? "ref-1" : null)
        if (plan.to === "unknown") {
          expect(after.verifyAt?.getTime(), label).toBe(after.updatedAt.getTime() + app.config.verifyIntervalMs)
        } else {
          expect(after.verifyAt, label).toBeNull()
        }
        const spent = plan.credits === "consume" ? 2 : 0
        const held = plan.credits === "keep" ? 2 : 0
        expect(after.totals.consumed - before.totals.consumed, label).toBe(spent)
        expect(before.totals.reserved - after.totals.reserved, label).toBe(2 - held)
        expect(after.totals.available - before.totals.available, label).toBe(plan.credits === "release" ? 2 : 0)
      }
    })
  }

  it("a message settled twice keeps its first settlement, and an immediate send then gets the stored first answer", async () => {
    const { orgId } = await app.newOrg({ credits: 2 })
    const message = await messageIn(orgId, "processing", null)
    const settle = (outcome: Outcome) => app.run(Effect.flatMap(Settlement, (s) => s.settle(message, outcome, "provider")))
    const first = await settle({ _tag: "Rejected" })
    expect(first.status).toBe(502)
    const second = await settle({ _tag: "NeverSent" })
    expect(second).toEqual(first)
    expect((await factsOf(orgId, message.id)).status).toBe("failed")
  })

  it("a scheduled message's settlement answers without storing anything for its key (its 202 was stored at admission)", async () => {
    const { orgId } = await app.newOrg({ credits: 4 })
    const message = await messageIn(orgId, "scheduled", new Date(Date.now() + 60_000))
    const answer = await app.run(Effect.flatMap(Settlement, (s) => s.settle(message, { _tag: "SenderUnavailable" }, "dispatch")))
    expect(answer.status).toBe(403)
    const facts = await factsOf(orgId, message.id)
    expect(facts.status).toBe("blocked")
    expect(facts.events.at(-1)).toEqual({ fromStatus: "scheduled", toStatus: "blocked", source: "dispatch" })
    // settled again (another path got there first): the plan's answer, not a stored one
    const again = await app.run(Effect.flatMap(Settlement, (s) => s.settle(message, { _tag: "SmsUnavailable" }, "dispatch")))
    expect(again.body).toMatchObject({ error: { code: "sms_unavailable" } })
  })

  it("settles a set of outcomes for many messages at once, each as if alone", async () => {
    const { orgId } = await app.newOrg({ credits: 40 })
    const messages = await Promise.all(Array.from({ length: 20 }, () => messageIn(orgId, "processing", null)))
    const answers = await Promise.all(messages.map((m, i) =>
      app.run(Effect.flatMap(Settlement, (s) => s.settle(m, i % 2 === 0 ? { _tag: "Accepted", providerRef: `r${i}` } : { _tag: "Rejected" }, "provider")))
    ))
    expect(answers.map((a) => a.status)).toEqual(messages.map((_, i) => (i % 2 === 0 ? 201 : 502)))
    const statuses = await Promise.all(messages.map(async (m) => (await factsOf(orgId, m.id)).status))
    expect(statuses).toEqual(messages.map((_, i) => (i % 2 === 0 ? "accepted" : "failed")))
    expect((await factsOf(orgId, messages[0]!.id)).totals).toMatchObject({ consumed: 20, reserved: 0, available: 20 })
  })
})
