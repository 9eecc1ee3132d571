/**
 * Fair share between organisations (contract section 11): a dispatcher's claim gives every
 * organisation with due work a turn, whatever the size of the others' backlogs
 * (MessageQueueStore.claimDue). Organisation A schedules a large batch, B one message due after
 * all of A's; a claim far smaller than A's backlog still takes B's message, and takes the
 * organisations round robin. An immediate send handed over by a process without its route's bind
 * (due now, no send_at: HandOver.ts) comes before any of them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import { expectAdmitted, oneSegmentText, ordinaryNumbers, postBatch } from "../batches/support.ts"
import { makeTestApp } from "../support/TestApp.ts"

describe("fair-share claim", () => {
  const app = makeTestApp({ label: "fair" })
  afterAll(() => app.dispose())

  const start = Date.now()
  const inMinutes = (m: number) => new Date(start + m * 60_000).toISOString()
  const minutes = (m: number) => new Date(start + m * 60_000)

  const schedule = async (token: string, recipients: ReadonlyArray<string>, sendAt: string) =>
    expectAdmitted(await postBatch(app, token, { recipients, text: oneSegmentText, send_at: sendAt }))

  const claim = (at: Date, limit: number) =>
    app.run(Effect.flatMap(MessageQueueStore, (q) => q.claimDue(at, limit, randomUUID(), { _tag: "All" })))

  it("takes a small organisation's due message ahead of a larger backlog due earlier", async () => {
    const a = await app.newOrg({ credits: 400 })
    const b = await app.newOrg({ credits: 1 })
    const c = await app.newOrg({ credits: 1 })
    await schedule(a.apiKey, ordinaryNumbers(300), inMinutes(60))
    await schedule(b.apiKey, ordinaryNumbers(1, 500), inMinutes(61))
    // C's message is not due yet when the claim runs: it waits
    await schedule(c.apiKey, ordinaryNumbers(1, 600), inMinutes(90.05))

    const claimed = await claim(minutes(90), 10)
    const byOrg = (id: string) => claimed.filter((m) => m.organisationId === id).length
    expect(claimed).toHaveLength(10)
    expect(byOrg(b.orgId), "B's one due message in the first claim").toBe(1)
    expect(byOrg(a.orgId)).toBe(9)
    expect(byOrg(c.orgId), "a message not yet due is not claimed").toBe(0)

    // the rest of A's backlog, in its own order, claim after claim
    const rest = await claim(minutes(90), 1000)
    expect(rest.map((m) => m.organisationId)).toEqual(Array(291).fill(a.orgId))
    expect(await claim(minutes(90), 1000), "everything due is claimed once").toEqual([])
    // 5 s later, within the claims' lease (MessageQueueStore.claimLeaseMs)
    const later = await claim(minutes(90.09), 1000)
    expect(later.map((m) => m.organisationId), "C's message once it is due").toEqual([c.orgId])
  }, 120_000)

  it("takes organisations in turn: a claim of three takes one message of each of three organisations", async () => {
    const orgs = await Promise.all([1, 2, 3].map(() => app.newOrg({ credits: 5 })))
    for (const [i, org] of orgs.entries()) await schedule(org.apiKey, ordinaryNumbers(5, 1000 + 10 * i), inMinutes(20 + i))
    // before anything of the first test falls due
    const at = minutes(30)
    const ids = orgs.map((o) => o.orgId).sort()
    for (const turn of [1, 2, 3, 4, 5]) {
      const claimed = await claim(at, 3)
      expect(claimed.map((m) => m.organisationId).sort(), `claim ${turn}: one message of each organisation`).toEqual(ids)
    }
    expect(await claim(at, 3)).toEqual([])
  }, 120_000)

  it("takes an immediate send handed over to the bind's holders before any due scheduled message", async () => {
    const a = await app.newOrg({ credits: 50 })
    const b = await app.newOrg({ credits: 1 })
    await schedule(a.apiKey, ordinaryNumbers(50, 2000), inMinutes(400))
    await schedule(b.apiKey, ordinaryNumbers(1, 2100), inMinutes(401))
    // B's message as HandOver stores an immediate send: due now, no send_at
    await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE messages SET send_at = NULL WHERE organisation_id = ${b.orgId}`
    }))
    const [first, ...others] = await claim(minutes(402), 1)
    expect(others).toEqual([])
    expect(first?.organisationId, "the handed-over send, though A's messages fell due earlier").toBe(b.orgId)
  }, 120_000)
})
