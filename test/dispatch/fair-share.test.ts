/**
 * Fair share between organisations (docs/decisions.md#fair-share-and-fleet-limits): a dispatcher's claim gives every
 * organisation with due work a turn, whatever the size of the others' backlogs
 * (MessageQueueStore.claimDue). Organisation A schedules a large batch, B one message due after
 * all of A's; a claim far smaller than A's backlog still takes B's message, and takes the
 * organisations round robin. An immediate send handed over by a process without its route's bind
 * (due now, no send_at: BindHolderRelay.ts) comes before any of them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import { expectAdmitted, oneSegmentText, ordinaryNumbers, postBatch } from "../batches/support.ts"
import { App, withApp } from "../support/TestApp.ts"

withApp({ label: "fair" })("fair-share claim", (it) => {
  const start = Date.now()
  const inMinutes = (m: number) => new Date(start + m * 60_000).toISOString()
  const minutes = (m: number) => new Date(start + m * 60_000)

  const schedule = (token: string, recipients: ReadonlyArray<string>, sendAt: string) =>
    Effect.map(postBatch(token, { recipients, text: oneSegmentText, send_at: sendAt }), expectAdmitted)

  const claim = (at: Date, limit: number) =>
    Effect.flatMap(MessageQueueStore, (q) => q.claimDue(at, limit, randomUUID(), { _tag: "All" }, false))

  it.effect(
    "takes a small organisation's due message ahead of a larger backlog due earlier",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const a = yield* app.newOrg({ credits: 400 })
        const b = yield* app.newOrg({ credits: 1 })
        const c = yield* app.newOrg({ credits: 1 })
        yield* schedule(a.apiKey, ordinaryNumbers(300), inMinutes(60))
        yield* schedule(b.apiKey, ordinaryNumbers(1, 500), inMinutes(61))
        // C's message is not due yet when the claim runs: it waits
        yield* schedule(c.apiKey, ordinaryNumbers(1, 600), inMinutes(90.05))

        const claimed = yield* claim(minutes(90), 10)
        const byOrg = (id: string) => claimed.filter((m) => m.organisationId === id).length
        expect(claimed).toHaveLength(10)
        expect(byOrg(b.orgId), "B's one due message in the first claim").toBe(1)
        expect(byOrg(a.orgId)).toBe(9)
        expect(byOrg(c.orgId), "a message not yet due is not claimed").toBe(0)

        // the rest of A's backlog, in its own order, claim after claim
        const rest = yield* claim(minutes(90), 1000)
        expect(rest.map((m) => m.organisationId)).toEqual(Array(291).fill(a.orgId))
        expect(yield* claim(minutes(90), 1000), "everything due is claimed once").toEqual([])
        // 5 s later, within the claims' lease (MessageQueueStore.claimLeaseMs)
        const later = yield* claim(minutes(90.09), 1000)
        expect(
          later.map((m) => m.organisationId),
          "C's message once it is due"
        ).toEqual([c.orgId])
      }),
    120_000
  )

  it.effect(
    "takes organisations in turn: a claim of three takes one message of each of three organisations",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const orgs = yield* Effect.all(
          [1, 2, 3].map(() => app.newOrg({ credits: 5 })),
          { concurrency: "unbounded" }
        )
        for (const [i, org] of orgs.entries())
          yield* schedule(org.apiKey, ordinaryNumbers(5, 1000 + 10 * i), inMinutes(20 + i))
        // before anything of the first test falls due
        const at = minutes(30)
        const ids = orgs.map((o) => o.orgId).sort()
        for (const turn of [1, 2, 3, 4, 5]) {
          const claimed = yield* claim(at, 3)
          expect(
            claimed.map((m) => m.organisationId).sort(),
            `claim ${turn}: one message of each organisation`
          ).toEqual(ids)
        }
        expect(yield* claim(at, 3)).toEqual([])
      }),
    120_000
  )

  it.effect(
    "takes an immediate send handed over to the bind's holders before any due scheduled message",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const a = yield* app.newOrg({ credits: 50 })
        const b = yield* app.newOrg({ credits: 1 })
        yield* schedule(a.apiKey, ordinaryNumbers(50, 2000), inMinutes(400))
        yield* schedule(b.apiKey, ordinaryNumbers(1, 2100), inMinutes(401))
        // B's message as BindHolderRelay stores an immediate send: due now, no send_at
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE messages SET send_at = NULL WHERE organisation_id = ${b.orgId}`
        })
        const [first, ...others] = yield* claim(minutes(402), 1)
        expect(others).toEqual([])
        expect(first?.organisationId, "the handed-over send, though A's messages fell due earlier").toBe(b.orgId)
      }),
    120_000
  )
})
