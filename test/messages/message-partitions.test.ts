/**
 * The monthly partitions of `messages` (issue 23, migration 18, MessagePartitions.ts and
 * PackedMessages.ts) under the service's test clock, every organisation keeping its messages a
 * day (SMS_RETENTION_DAYS=1):
 *
 * - a past month whose messages are all erased is packed and its partition dropped, and every
 *   reader answers as before for each of its messages: the public message and the batch (its
 *   counts, its pages), the operator's lookups (by organisation, by id alone, with the timeline),
 *   the operator's list newest first (paged, by status, mixed with the messages of the next month
 *   still in rows), the counts of final statuses of /metrics; a replay of a creation still answers
 *   410 and the operator's erasure of a packed message answers it again;
 * - a past month holding a message not erased (unknown for good) is neither packed nor dropped;
 * - as the clock goes on, month after month, this month's partition and the next two are made ahead;
 * - a drop that cannot lock `messages` within its wait leaves the emptied partition for the next
 *   round, and a partition ahead that cannot be attached within its wait (a reader holding the
 *   default partition) is made at the next round (PostgreSQL only: the embedded database serves
 *   one connection at a time).
 *
 * The tests share one app and its clock, which only moves forward: they run in order.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import {
  expectMonthsMadeAhead,
  expectPartitionAheadYieldsToReaders,
  month,
  monthStart,
  partitionsOf,
  whileLocked
} from "../support/Months.ts"
import { App, backend, type Reply, withApp } from "../support/TestApp.ts"

const dayMs = 86_400_000
const messagesPath = "/api/sms/v2/messages/"
const batchesPath = "/api/sms/v2/message-batches/"

const partitions = () => partitionsOf("messages")

/** The packs of an organisation: members and batch of each. */
const packsOf = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ members: number; batchId: string | null }>`SELECT members, batch_id::text FROM erased_messages
      WHERE organisation_id = ${orgId} ORDER BY last_id`
  )

/** Numbers of a batch of `n`: one undeliverable, one rejected at the provider, the others delivered. */
const batchNumbers = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    i === 7 ? "+261340000002" : i === 150 ? "+261340000003" : `+26133${String(1_000_000 + i).padStart(7, "0")}`
  )

/** Everything the service answers about the messages `ids` of the organisation and its batch: to compare before and after packing. */
const views = (org: { orgId: string; apiKey: string }, ids: ReadonlyArray<string>, batchId: string) =>
  Effect.gen(function* () {
    const app = yield* App
    const store = yield* MessageStore
    const publicMessages = []
    const operatorMessages = []
    for (const id of ids) {
      const read = yield* app.call("GET", `${messagesPath}${id}/`, { token: org.apiKey })
      expect(read.status, read.text).toBe(200)
      publicMessages.push(read.body)
      const byOrg = yield* app.admin("GET", `/organizations/${org.orgId}/messages/${id}`)
      const anywhere = yield* app.admin("GET", `/messages/${id}`)
      expect(byOrg.status, byOrg.text).toBe(200)
      expect(anywhere.body).toEqual({ ...byOrg.body, org_id: org.orgId })
      operatorMessages.push(anywhere.body)
    }
    const batch = yield* app.call("GET", `${batchesPath}${batchId}/`, { token: org.apiKey })
    const pages = []
    let cursor: string | null = ""
    while (cursor !== null) {
      const page: Reply = yield* app.call(
        "GET",
        `${batchesPath}${batchId}/messages/${cursor === "" ? "" : `?cursor=${encodeURIComponent(cursor)}`}`,
        {
          token: org.apiKey
        }
      )
      expect(page.status, page.text).toBe(200)
      pages.push(...page.body.results)
      cursor = page.body.next_cursor
    }
    const finalCounts = Object.fromEntries((yield* store.finalCounts).map((r) => [r.status, r.n]))
    return { publicMessages, operatorMessages, batch: batch.body, pages, finalCounts }
  })

/** The operator's list of the organisation's messages, newest first, `limit` a page, every page: the ids. */
const listed = (orgId: string, limit: number, status?: string) =>
  Effect.gen(function* () {
    const app = yield* App
    const ids: Array<string> = []
    let cursor: string | null = ""
    while (cursor !== null) {
      const query: string = [
        `limit=${limit}`,
        ...(status === undefined ? [] : [`status=${status}`]),
        ...(cursor === "" ? [] : [`cursor=${encodeURIComponent(cursor)}`])
      ].join("&")
      const page: Reply = yield* app.admin("GET", `/organizations/${orgId}/messages?${query}`)
      expect(page.status, page.text).toBe(200)
      expect(page.body.results.length).toBeLessThanOrEqual(limit)
      ids.push(...page.body.results.map((m: { id: string }) => m.id))
      cursor = page.body.next_cursor
    }
    return ids
  })

withApp({ label: "message_partitions", config: { clock: "test", retentionDays: 1 } })(
  `messages' monthly partitions (${backend})`,
  (it) => {
    it.effect(
      "a past month whose messages are all erased is packed and its partition dropped; every reader answers as before",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const start = yield* app.now
          const org = yield* app.newOrg({ credits: 1_000, sender: "PACKED" })
          // a batch of 300 (two packs: 256 and 44), and messages of no batch around it
          const single = (to: string) =>
            Effect.gen(function* () {
              const key = randomUUID()
              const created = yield* app.call("POST", messagesPath, {
                token: org.apiKey,
                body: { to, text: `packed ${to}` },
                headers: { "idempotency-key": key }
              })
              return { id: (created.body.id ?? created.body.message_id) as string, key, to }
            })
          const before = [yield* single("+261340000001"), yield* single("+261340000003")]
          const created = yield* app.call("POST", batchesPath, {
            token: org.apiKey,
            body: {
              recipients: batchNumbers(300),
              text: "a batch packed",
              send_at: new Date(start + 60_000).toISOString()
            },
            headers: { "idempotency-key": randomUUID() }
          })
          expect(created.status, created.text).toBe(202)
          const batchId: string = created.body.id
          const after = [yield* single("+261340000008"), yield* single("+261340000001")]
          yield* app.advance(120_000)
          const members: Array<string> = []
          let cursor: string | null = ""
          while (cursor !== null) {
            const page: Reply = yield* app.call(
              "GET",
              `${batchesPath}${batchId}/messages/${cursor === "" ? "" : `?cursor=${encodeURIComponent(cursor)}`}`,
              { token: org.apiKey }
            )
            members.push(...page.body.results.map((m: { id: string }) => m.id))
            cursor = page.body.next_cursor
          }
          expect(members).toHaveLength(300)
          const ids = [...before.map((m) => m.id), ...members, ...after.map((m) => m.id)]

          // a day later every message is final and erased; still rows of this month's partition
          yield* app.advance(dayMs + 60_000)
          const erased = yield* views(org, ids, batchId)
          expect(
            erased.publicMessages.every(
              (m: { to: string; status: string }) =>
                m.to === "" && ["delivered", "undeliverable", "failed"].includes(m.status)
            )
          ).toBe(true)
          expect(erased.batch.counts).toMatchObject({ delivered: 298, undeliverable: 1, failed: 1 })
          expect((yield* partitions())[`p${month(start)}`]).toBe(ids.length)
          const listedBefore = yield* listed(org.orgId, 7)
          const failedBefore = yield* listed(org.orgId, 2, "failed")
          expect(listedBefore).toHaveLength(ids.length)
          expect(failedBefore).toHaveLength(3)

          // the next month, a message of that month; a day after its start the past month is packed and dropped
          yield* app.advanceTo(monthStart(yield* app.now, 1) + 60_000)
          const next = yield* single("+261340000001")
          yield* app.advance(dayMs + 60_000)
          const left = yield* partitions()
          expect(left[`p${month(start)}`]).toBeUndefined()
          expect(left[`p${month(start, 1)}`]).toBe(1)
          expect(yield* packsOf(org.orgId)).toEqual([
            { members: 2, batchId: null },
            { members: 256, batchId },
            { members: 44, batchId },
            { members: 2, batchId: null }
          ])

          // every reader answers as before
          const packed = yield* views(org, ids, batchId)
          expect(packed.publicMessages).toEqual(erased.publicMessages)
          expect(packed.operatorMessages).toEqual(erased.operatorMessages)
          expect(packed.batch).toEqual(erased.batch)
          expect(packed.pages).toEqual(erased.pages)
          expect(packed.finalCounts).toEqual({ ...erased.finalCounts, delivered: erased.finalCounts["delivered"]! + 1 })
          for (const limit of [1, 7, 100])
            expect(yield* listed(org.orgId, limit), `pages of ${limit}`).toEqual([next.id, ...listedBefore])
          expect(yield* listed(org.orgId, 2, "failed")).toEqual(failedBefore)
          expect(yield* listed(org.orgId, 3, "undeliverable")).toHaveLength(1)
          expect(yield* listed(org.orgId, 3, "blocked")).toEqual([])

          // a replay still answers 410; the operator's erasure of a packed message answers it as it is
          const replay = yield* app.call("POST", messagesPath, {
            token: org.apiKey,
            body: { to: before[0]!.to, text: `packed ${before[0]!.to}` },
            headers: { "idempotency-key": before[0]!.key }
          })
          expect(replay.status, replay.text).toBe(410)
          const erasedAgain = yield* app.admin("POST", `/organizations/${org.orgId}/messages/${before[0]!.id}/erasure`)
          expect(erasedAgain.status, erasedAgain.text).toBe(200)
          expect(erasedAgain.body).toMatchObject({ id: before[0]!.id, to: "", status: "delivered" })
          // an id packed nowhere, and one of another organisation: 404
          const other = yield* app.newOrg({ credits: 1 })
          expect((yield* app.call("GET", `${messagesPath}${before[0]!.id}/`, { token: other.apiKey })).status).toBe(404)
          expect((yield* app.call("GET", `${messagesPath}${randomUUID()}/`, { token: org.apiKey })).status).toBe(404)
        })
    )

    it.effect("a past month holding a message not erased (unknown for good) is neither packed nor dropped", () =>
      Effect.gen(function* () {
        const app = yield* App
        const start = yield* app.now
        const org = yield* app.newOrg({ credits: 10 })
        const created = yield* app.call("POST", messagesPath, {
          token: org.apiKey,
          body: { to: "+261340000009", text: "unknown for good" },
          headers: { "idempotency-key": randomUUID() }
        })
        expect(created.status, created.text).toBe(502)
        yield* app.advanceTo(monthStart(yield* app.now, 2) + 60_000)
        expect((yield* partitions())[`p${month(start)}`]).toBeGreaterThanOrEqual(1)
        expect(yield* packsOf(org.orgId)).toEqual([])
        const read = yield* app.call("GET", `${messagesPath}${created.body.message_id}/`, { token: org.apiKey })
        expect(read.body).toMatchObject({ status: "unknown", to: "+261340000009" })
      })
    )

    it.effect("as the clock goes on, month after month, this month's partition and the next two are made ahead", () =>
      expectMonthsMadeAhead("messages", 13)
    )

    it.effect.skipIf(process.env.DATABASE_URL === undefined)(
      "a drop that cannot lock messages within its wait leaves the emptied partition for the next round (needs PostgreSQL)",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const start = yield* app.now
          const org = yield* app.newOrg({ credits: 10 })
          yield* app.call("POST", messagesPath, {
            token: org.apiKey,
            body: { to: "+261340000001", text: "held" },
            headers: { "idempotency-key": randomUUID() }
          })
          yield* app.advance(dayMs + 60_000)
          // a day into the next month, no work run yet: the month of the message is past, its message erased
          yield* app.moveClock(monthStart(yield* app.now, 1) + dayMs + 60_000 - (yield* app.now))
          // a writer's lock on messages (the partitioned table itself, as every statement on it takes),
          // held while the month is packed and its drop is tried
          yield* whileLocked((sql) => sql`LOCK TABLE ONLY messages IN ROW EXCLUSIVE MODE`, app.advance(1_000))
          expect((yield* partitions())[`p${month(start)}`]).toBe(0)
          expect(yield* packsOf(org.orgId)).toEqual([{ members: 1, batchId: null }])
          yield* app.advance(1_000)
          expect((yield* partitions())[`p${month(start)}`]).toBeUndefined()
        })
    )

    it.effect.skipIf(process.env.DATABASE_URL === undefined)(
      "a partition ahead that cannot be attached within its wait (a reader of messages holds the default partition) is made at the next round (needs PostgreSQL)",
      () => expectPartitionAheadYieldsToReaders("messages")
    )
  }
)
