/**
 * Settlement of provider outcomes at the level of the service (src/messages/Settlement.ts): for
 * every outcome and every status a message can be in, whether it moves and where to, what its
 * credits do, the timeline entry, the answer an immediate send gives and the one its key stores.
 * The expected table is written out here from docs/decisions.md (Credits, Message states), not read from the code.
 */
import { Effect, Exit, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { MessageStatuses, type MessageStatus } from "../../src/domain/MessageStatus.ts"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { admitted } from "../../src/messages/CompactTimeline.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { isDatabaseUnavailable } from "../../src/db/DatabaseUnavailable.ts"
import { IdempotencyStore } from "../../src/idempotency/IdempotencyStore.ts"
import { type Outcome, Settlement, SettlementWaitMs } from "../../src/messages/Settlement.ts"
import { App, backend, withApp } from "../support/TestApp.ts"
import { messageCreditsSql } from "../support/Credits.ts"

interface Expected {
  readonly from: ReadonlyArray<MessageStatus>
  readonly to: MessageStatus
  readonly credits: "consume" | "release" | "keep"
  readonly status: number
  readonly code: string | undefined
  readonly message?: string
}

const expected: Record<Outcome["_tag"], Expected> = {
  Accepted: { from: ["processing", "unknown"], to: "accepted", credits: "consume", status: 201, code: undefined },
  Rejected: {
    from: ["processing", "unknown"],
    to: "failed",
    credits: "release",
    status: 502,
    code: "provider_rejected",
    message: "The provider rejected the message; it will not be sent"
  },
  NeverSent: {
    from: ["processing", "unknown"],
    to: "failed",
    credits: "release",
    status: 503,
    code: "dispatch_unavailable",
    message: "The message could not be handed to the provider; it was not sent"
  },
  Unknown: {
    from: ["processing"],
    to: "unknown",
    credits: "keep",
    status: 502,
    code: "provider_result_unknown",
    message: "The provider's answer is unknown; read the message, never resend it with a new key"
  },
  NotReceived: {
    from: ["unknown"],
    to: "failed",
    credits: "release",
    status: 502,
    code: "provider_result_unknown",
    message: "The provider's answer is unknown; read the message, never resend it with a new key"
  },
  SenderUnavailable: {
    from: ["scheduled", "processing"],
    to: "blocked",
    credits: "release",
    status: 403,
    code: "sender_name_unavailable",
    message: "The sender name was not available when the message was due; it was not sent"
  },
  SmsUnavailable: {
    from: ["scheduled", "processing"],
    to: "failed",
    credits: "release",
    status: 403,
    code: "sms_unavailable",
    message: "SMS was not available for the organisation when the message was due; it was not sent"
  },
  OptedOut: {
    from: ["scheduled", "processing"],
    to: "failed",
    credits: "release",
    status: 503,
    code: "dispatch_unavailable",
    message: "The recipient opted out of this organisation's messages before it was handed over; it was not sent"
  }
}

const outcomeOf = (tag: Outcome["_tag"]): Outcome =>
  tag === "Accepted" ? { _tag: tag, providerRef: "ref-1" } : { _tag: tag }

/** A message of two segments in `status`, its credits reserved, its key (when immediate) in progress. */
const messageIn = (orgId: string, status: MessageStatus, sendAt: Date | null) =>
  Effect.gen(function* () {
    const id = randomUUID()
    const store = yield* MessageStore
    const at = new Date()
    yield* store.insert(
      orgId,
      [
        {
          id,
          batchId: null,
          batchPosition: null,
          toNumber: "+261340000001",
          senderName: "INFO",
          text: "settle me",
          segments: 2,
          status: "processing",
          sendAt,
          workerId: null
        }
      ],
      at
    )
    yield* (yield* Ledger).reserve(orgId, [{ messageId: id, credits: 2 }])
    const sql = yield* SqlClient.SqlClient
    // as if admitted in that status: its timeline's one entry says so
    yield* sql`UPDATE messages SET status = ${status}, timeline = ${sql.literal(admitted(`'${status}'`, "created_at"))}
      WHERE organisation_id = ${orgId} AND id = ${id}`
    if (sendAt === null) {
      yield* (yield* Idempotency).claim({
        organisationId: orgId,
        route: "messages",
        key: `settle-${id}`,
        fingerprint: "f",
        messageId: id
      })
    }
    return (yield* store.find(orgId, id))!
  })

/** What is stored about the message after settlement. */
const factsOf = (orgId: string, id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{
      status: string
      providerMessageId: string | null
      verifyAt: Date | null
      updatedAt: Date
    }>`SELECT
        status, provider_message_id, verify_at, updated_at FROM messages WHERE organisation_id = ${orgId} AND id = ${id}`
    // where its credits are, as two-phase states (a settled hold is its consume or release entry)
    const [credits] = yield* sql<{ pending: number; posted: number; voided: number }>`SELECT pending, posted, voided
      FROM (${sql.literal(messageCreditsSql)}) AS c WHERE organisation_id = ${orgId} AND message_id = ${id}`
    const holds = (["pending", "posted", "voided"] as const).filter((state) => (credits?.[state] ?? 0) > 0)
    const events = (yield* (yield* MessageStore).timeline(orgId, id)).map(({ fromStatus, source, toStatus }) => ({
      fromStatus,
      toStatus,
      source
    }))
    const stored = yield* (yield* IdempotencyStore).answerOfMessage(orgId, id)
    const [key] = yield* sql<{ updatedAt: Date }>`SELECT updated_at FROM idempotency_keys
      WHERE organisation_id = ${orgId} AND message_id = ${id}`
    return {
      ...row!,
      keyUpdatedAt: key?.updatedAt,
      holds,
      events,
      stored,
      totals: yield* (yield* Ledger).totals(orgId)
    }
  })

/**
 * Holds the message's row locked in a transaction of its own until `release` is called. On the
 * embedded database (one connection) that holds the whole database, on PostgreSQL the row: either
 * way no settlement of the message commits meanwhile, as in an outage.
 */
const holdRow = (orgId: string, id: string) =>
  Effect.gen(function* () {
    let locked!: () => void
    let release!: () => void
    const isLocked = new Promise<void>((resolve) => (locked = resolve))
    const released = new Promise<void>((resolve) => (release = resolve))
    const done = yield* Effect.forkChild(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT id FROM messages WHERE organisation_id = ${orgId} AND id = ${id} FOR UPDATE`
            locked()
            yield* Effect.promise(() => released)
          })
        )
      })
    )
    yield* Effect.promise(() => isLocked)
    return () =>
      Effect.gen(function* () {
        release()
        yield* Fiber.join(done)
      })
  })

const settleOf = (message: Effect.Success<ReturnType<typeof messageIn>>, outcome: Outcome) =>
  Effect.flatMap(Settlement, (s) => s.settleAnswer(message, outcome, "provider"))

const holdStateAfter = { consume: "posted", release: "voided", keep: "pending" } as const

withApp()(`settlement of outcomes (${backend})`, (it) => {
  for (const tag of Object.keys(expected) as Array<Outcome["_tag"]>) {
    const plan = expected[tag]
    it.effect(
      `${tag}: moves ${plan.from.join(" or ")} to ${plan.to} (${plan.credits}), leaves every other status alone`,
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId } = yield* app.newOrg({ credits: 2 * MessageStatuses.length })
          for (const status of MessageStatuses) {
            const message = yield* messageIn(orgId, status, null)
            const before = yield* factsOf(orgId, message.id)
            const answer = yield* Effect.flatMap(Settlement, (s) => s.settleAnswer(message, outcomeOf(tag), "provider"))
            const after = yield* factsOf(orgId, message.id)
            const moves = plan.from.includes(status)
            const label = `${tag} on ${status}`

            // the answer an immediate send gives: the plan's, or (not moved) none stored, so the plan's too
            expect(answer.status, label).toBe(plan.status)
            if (plan.code === undefined) {
              expect(answer.body, label).toMatchObject({
                id: message.id,
                status: "accepted",
                to: "+261340000001",
                sender_name: "INFO"
              })
              expect(answer.location, label).toBe(`/api/sms/v2/messages/${message.id}/`)
            } else {
              expect(answer.body, label).toEqual({
                error: { code: plan.code, message: plan.message },
                message_id: message.id
              })
              expect(answer.location, label).toBeNull()
            }

            if (!moves) {
              expect(
                { status: after.status, holds: after.holds, events: after.events.length, stored: after.stored },
                label
              ).toEqual({ status, holds: before.holds, events: before.events.length, stored: undefined })
              continue
            }
            expect(after.status, label).toBe(plan.to)
            expect(after.holds, label).toEqual([holdStateAfter[plan.credits]])
            expect(after.events.at(-1), label).toEqual({ fromStatus: status, toStatus: plan.to, source: "provider" })
            expect(after.events, label).toHaveLength(before.events.length + 1)
            expect(after.stored, `${label}: the key's stored answer`).toEqual(answer)
            expect(after.keyUpdatedAt, `${label}: the key's answer stored at the settlement`).toEqual(after.updatedAt)
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
    )
  }

  it.effect(
    "a message settled twice keeps its first settlement, and an immediate send then gets the stored first answer",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 2 })
        const message = yield* messageIn(orgId, "processing", null)
        const settle = (outcome: Outcome) =>
          Effect.flatMap(Settlement, (s) => s.settleAnswer(message, outcome, "provider"))
        const first = yield* settle({ _tag: "Rejected" })
        expect(first.status).toBe(502)
        const second = yield* settle({ _tag: "NeverSent" })
        expect(second).toEqual(first)
        expect((yield* factsOf(orgId, message.id)).status).toBe("failed")
      })
  )

  it.effect("a scheduled message's settlement stores nothing for its key (its 202 was stored at admission)", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId } = yield* app.newOrg({ credits: 4 })
      const message = yield* messageIn(orgId, "scheduled", new Date(Date.now() + 60_000))
      const accepted202 = {
        status: 202,
        body: { id: message.id, status: "scheduled" },
        location: `/api/sms/v2/messages/${message.id}/`
      }
      yield* Effect.flatMap(Idempotency, (i) =>
        i.claim({
          organisationId: orgId,
          route: "messages",
          key: `scheduled-${message.id}`,
          fingerprint: "f",
          messageId: message.id,
          answer: accepted202
        })
      )
      yield* Effect.flatMap(Settlement, (s) => s.settle(message, { _tag: "SenderUnavailable" }, "dispatch"))
      const facts = yield* factsOf(orgId, message.id)
      expect(facts.status).toBe("blocked")
      expect(facts.events.at(-1)).toEqual({ fromStatus: "scheduled", toStatus: "blocked", source: "dispatch" })
      // settled again (another path got there first): nothing moves
      yield* Effect.flatMap(Settlement, (s) => s.settle(message, { _tag: "SmsUnavailable" }, "dispatch"))
      const after = yield* factsOf(orgId, message.id)
      expect({ status: after.status, events: after.events.length }).toEqual({
        status: "blocked",
        events: facts.events.length
      })
      // the key keeps its 202
      expect(after.stored).toEqual(accepted202)
    })
  )

  it.effect("two outcomes of one message settled at once: one wins, once; both callers get its answer", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId } = yield* app.newOrg({ credits: 8 })
      for (let round = 0; round < 3; round++) {
        const message = yield* messageIn(orgId, "processing", null)
        const [a, b] = yield* Effect.all(
          [
            Effect.flatMap(Settlement, (s) =>
              s.settleAnswer(message, { _tag: "Accepted", providerRef: "r" }, "provider")
            ),
            Effect.flatMap(Settlement, (s) => s.settleAnswer(message, { _tag: "Rejected" }, "provider"))
          ],
          { concurrency: "unbounded" }
        )
        const facts = yield* factsOf(orgId, message.id)
        expect(b).toEqual(a)
        expect(facts.stored).toEqual(a)
        expect(facts.events.filter((e) => e.fromStatus === "processing")).toHaveLength(1)
        expect(facts.holds).toEqual([facts.status === "accepted" ? "posted" : "voided"])
      }
      const totals = (yield* factsOf(orgId, (yield* messageIn(orgId, "scheduled", new Date(Date.now() + 60_000))).id))
        .totals
      expect(totals.reserved + totals.consumed + totals.available).toBe(8)
    })
  )

  it.effect(
    "a settlement the database does not confirm in time: the caller gets a connection failure (503), the settlement still commits",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 2 })
        const message = yield* messageIn(orgId, "processing", null)
        const release = yield* holdRow(orgId, message.id)
        const exit = yield* Effect.exit(
          settleOf(message, { _tag: "Accepted", providerRef: "late" }).pipe(
            Effect.provideService(SettlementWaitMs, 200)
          )
        )
        yield* release()
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
        expect(isDatabaseUnavailable(error) && { code: error.error.code, reason: error.reason }).toEqual({
          code: "service_unavailable",
          reason: "the database did not confirm the settlement in time; it is retried"
        })
        // the same outcome again waits behind the first, which commits once the row is free
        const answer = yield* settleOf(message, { _tag: "Accepted", providerRef: "late" })
        expect(answer).toMatchObject({ status: 201, body: { id: message.id, status: "accepted" } })
        const facts = yield* factsOf(orgId, message.id)
        expect({
          status: facts.status,
          ref: facts.providerMessageId,
          holds: facts.holds,
          stored: facts.stored
        }).toEqual({
          status: "accepted",
          ref: "late",
          holds: ["posted"],
          stored: answer
        })
        expect(facts.events.filter((e) => e.fromStatus === "processing")).toHaveLength(1)
      })
  )

  it.effect("two outcomes of one message in one set are applied in the order they came: unknown, then accepted", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId } = yield* app.newOrg({ credits: 4 })
      const [first, message] = [
        yield* messageIn(orgId, "processing", null),
        yield* messageIn(orgId, "processing", null)
      ]
      // while the first message's set waits on its row, both outcomes of the second gather into the next set
      const release = yield* holdRow(orgId, first.id)
      const held = yield* Effect.forkChild(settleOf(first, { _tag: "Rejected" }))
      const both = yield* Effect.forkChild(
        Effect.all(
          [settleOf(message, { _tag: "Unknown" }), settleOf(message, { _tag: "Accepted", providerRef: "r2" })],
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      yield* release()
      const [unknown, accepted] = yield* Fiber.join(both)
      expect((yield* Fiber.join(held)).status).toBe(502)
      expect(unknown.body).toMatchObject({ error: { code: "provider_result_unknown" } })
      expect(accepted).toMatchObject({ status: 201, body: { status: "accepted" } })
      const facts = yield* factsOf(orgId, message.id)
      expect(facts.events.slice(-2).map((e) => `${e.fromStatus}->${e.toStatus}`)).toEqual([
        "processing->unknown",
        "unknown->accepted"
      ])
      expect({ status: facts.status, ref: facts.providerMessageId, holds: facts.holds }).toEqual({
        status: "accepted",
        ref: "r2",
        holds: ["posted"]
      })
    })
  )

  it.effect("outcomes of distinct messages that gather while a set runs are settled together, in one transaction", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId } = yield* app.newOrg({ credits: 22 })
      const first = yield* messageIn(orgId, "processing", null)
      const messages = yield* Effect.all(
        Array.from({ length: 10 }, () => messageIn(orgId, "processing", null)),
        { concurrency: "unbounded" }
      )
      const release = yield* holdRow(orgId, first.id)
      const held = yield* Effect.forkChild(settleOf(first, { _tag: "Rejected" }))
      const gathered = yield* Effect.forkChild(
        Effect.all(
          messages.map((m) => settleOf(m, { _tag: "Accepted", providerRef: "r" })),
          { concurrency: "unbounded" }
        )
      )
      // time for every caller to hand its outcome in (the set runner is held meanwhile)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
      yield* release()
      yield* Fiber.join(held)
      expect((yield* Fiber.join(gathered)).map((a) => a.status)).toEqual(messages.map(() => 201))
      // the rows a transaction writes carry its id (xmin)
      const transactions = yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ xmin: string }>`SELECT DISTINCT xmin::text FROM messages
          WHERE organisation_id = ${orgId} AND id IN ${sql.in(messages.map((m) => m.id))}`
      )
      expect(transactions).toHaveLength(1)
    })
  )

  it.effect("settles a set of outcomes for many messages at once, each as if alone", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId } = yield* app.newOrg({ credits: 40 })
      const messages = yield* Effect.all(
        Array.from({ length: 20 }, () => messageIn(orgId, "processing", null)),
        { concurrency: "unbounded" }
      )
      const answers = yield* Effect.all(
        messages.map((m, i) =>
          Effect.flatMap(Settlement, (s) =>
            s.settleAnswer(
              m,
              i % 2 === 0 ? { _tag: "Accepted", providerRef: `r${i}` } : { _tag: "Rejected" },
              "provider"
            )
          )
        ),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual(messages.map((_, i) => (i % 2 === 0 ? 201 : 502)))
      const statuses = yield* Effect.all(
        messages.map((m) => factsOf(orgId, m.id).pipe(Effect.map((facts) => facts.status))),
        { concurrency: "unbounded" }
      )
      expect(statuses).toEqual(messages.map((_, i) => (i % 2 === 0 ? "accepted" : "failed")))
      expect((yield* factsOf(orgId, messages[0]!.id)).totals).toMatchObject({
        consumed: 20,
        reserved: 0,
        available: 20
      })
    })
  )

  it.effect(
    "one outcome the database refuses (a provider id holding a NUL) fails only its own caller; the set it came in still settles",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 22 })
        const first = yield* messageIn(orgId, "processing", null)
        const messages = yield* Effect.all(
          Array.from({ length: 6 }, () => messageIn(orgId, "processing", null)),
          { concurrency: "unbounded" }
        )
        const release = yield* holdRow(orgId, first.id)
        const held = yield* Effect.forkChild(settleOf(first, { _tag: "Rejected" }))
        // gathered into one set while the first is held: the third carries an id PostgreSQL cannot store
        const gathered = yield* Effect.forkChild(
          Effect.all(
            messages.map((m, i) =>
              Effect.exit(settleOf(m, { _tag: "Accepted", providerRef: i === 2 ? "sim:bad\u0000id" : `sim:ok-${i}` }))
            ),
            { concurrency: "unbounded" }
          )
        )
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        yield* release()
        yield* Fiber.join(held)
        const exits = yield* Fiber.join(gathered)
        expect(exits.map((e) => (Exit.isSuccess(e) ? e.value.status : "failed"))).toEqual([
          201,
          201,
          "failed",
          201,
          201,
          201
        ])
        const statuses = yield* Effect.all(
          messages.map((m) => factsOf(orgId, m.id).pipe(Effect.map((facts) => facts.status))),
          { concurrency: "unbounded" }
        )
        expect(statuses).toEqual(["accepted", "accepted", "processing", "accepted", "accepted", "accepted"])
      })
  )
})
