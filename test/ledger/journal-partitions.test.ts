/**
 * The ledger journal's monthly partitions (issue 23, LedgerStore, JournalPartitions) under the
 * service's test clock, every organisation keeping its messages a day (SMS_RETENTION_DAYS=1):
 * erasure folds a message's entries into its lot's monthly totals; a past month's partition is
 * dropped once retention has emptied it of messages' entries, its grants folded too, the balance
 * and every lot's counters (its entries plus its totals) unchanged; a partition still holding a
 * message's entries stays; an entry written in a month without a partition lands in the default
 * partition and moves into its month's partition when that is made; as the clock goes on, the
 * partitions of each month and the next two are there before anything is written in them; a
 * drop that cannot lock the journal at once (an admission writing it) leaves the partition for
 * the next round, and a partition ahead that cannot be attached at once (a reader of the journal
 * holding its default partition) is made at the next round (PostgreSQL only: the embedded
 * database serves one connection at a time). The
 * tests share one app and its clock, which only moves forward: they run in order.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { LedgerStore } from "../../src/ledger/LedgerStore.ts"
import {
  expectMonthsMadeAhead,
  expectPartitionAheadYieldsToReaders,
  month,
  monthStart,
  partitionsOf,
  whileLocked
} from "../support/Months.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const dayMs = 86_400_000
const messagesPath = "/api/sms/v2/messages/"

const query = <A extends object>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, text)

const partitions = () => partitionsOf("credit_entries")

/** Per lot of the organisation: its counters, and what its entries and its totals add up to, by kind. */
const lotsOf = (orgId: string) =>
  query(
    (sql) =>
      sql<{
        amount: number
        reserved: number
        consumed: number
        fromEntries: string
        fromTotals: string
      }>`SELECT l.amount, l.reserved, l.consumed,
        (SELECT coalesce(string_agg(kind || ' ' || s, ', ' ORDER BY kind), '') FROM (SELECT kind, sum(amount) AS s FROM credit_entries e
          WHERE e.organisation_id = l.organisation_id AND e.lot_id = l.id GROUP BY kind) AS x) AS from_entries,
        (SELECT coalesce(string_agg(kind || ' ' || s, ', ' ORDER BY kind), '') FROM (SELECT kind, sum(amount) AS s FROM credit_entry_totals t
          WHERE t.organisation_id = l.organisation_id AND t.lot_id = l.id GROUP BY kind) AS x) AS from_totals
      FROM credit_lots AS l WHERE l.organisation_id = ${orgId} ORDER BY l.id`
  )

/** An organisation with 10 credits and a message sent now to `to`. */
const sent = (to = "+261340000001") =>
  Effect.gen(function* () {
    const app = yield* App
    const { orgId, apiKey } = yield* app.newOrg({ credits: 10, sender: "KEEP" })
    const created = yield* app.call("POST", messagesPath, {
      token: apiKey,
      body: { to, text: `journal ${randomUUID()}` },
      headers: { "idempotency-key": randomUUID() }
    })
    expect(created.status, created.text).toBe(to === "+261340000009" ? 502 : 201)
    const id: string = created.body.id ?? created.body.message_id
    const read = () =>
      app.call("GET", `${messagesPath}${id}/`, { token: apiKey }).pipe(Effect.map((reply) => reply.body))
    const balance = () =>
      app.call("GET", "/api/sms/v2/balance/", { token: apiKey }).pipe(Effect.map((reply) => reply.body))
    return { orgId, id, read, balance }
  })

withApp({ label: "journal_partitions", config: { clock: "test", retentionDays: 1 } })(
  `ledger journal partitions (${backend})`,
  (it) => {
    it.effect(
      "erasure folds a message's entries into its lot's totals; the emptied month's partition is dropped the next month, its grant folded",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const start = yield* app.now
          const m = yield* sent()
          yield* app.advance(app.config.simulatorReceiptDelayMs + 1_000)
          expect((yield* m.read()).status).toBe("delivered")
          const balance = yield* m.balance()
          expect(yield* lotsOf(m.orgId)).toEqual([
            { amount: 10, reserved: 0, consumed: 1, fromEntries: "consume 1, grant 10, reserve 1", fromTotals: "" }
          ])
          expect(yield* partitions()).toMatchObject({
            [`p${month(start)}`]: expect.any(Number),
            [`p${month(start, 2)}`]: 0
          })

          // a day later the message is erased: its entries go into the totals, the grant stays an entry
          yield* app.advance(dayMs + 60_000)
          expect(yield* m.read()).toMatchObject({ to: "", status: "delivered" })
          expect(yield* lotsOf(m.orgId)).toEqual([
            { amount: 10, reserved: 0, consumed: 1, fromEntries: "grant 10", fromTotals: "consume 1, reserve 1" }
          ])

          // into the third month: the first month's partition held only grants (every message erased): dropped, its grants folded
          yield* app.advanceTo(monthStart(yield* app.now, 2) + 60_000)
          const now = yield* app.now
          const left = yield* partitions()
          expect(left[`p${month(start)}`]).toBeUndefined()
          expect(Object.keys(left)).toEqual(
            expect.arrayContaining([`p${month(now)}`, `p${month(now, 1)}`, `p${month(now, 2)}`, "default"])
          )
          expect(yield* lotsOf(m.orgId)).toEqual([
            { amount: 10, reserved: 0, consumed: 1, fromEntries: "", fromTotals: "consume 1, grant 10, reserve 1" }
          ])
          expect(yield* m.balance()).toEqual(balance)
        })
    )

    it.effect("a past month's partition still holding a message's entries (unknown for good: never erased) stays", () =>
      Effect.gen(function* () {
        const app = yield* App
        const start = yield* app.now
        const m = yield* sent("+261340000009")
        yield* app.advance(dayMs + 60_000)
        expect((yield* m.read()).status).toBe("unknown")
        yield* app.advanceTo(monthStart(yield* app.now, 2) + 60_000)
        expect((yield* partitions())[`p${month(start)}`]).toBeGreaterThanOrEqual(1)
        expect(yield* lotsOf(m.orgId)).toEqual([
          { amount: 10, reserved: 1, consumed: 0, fromEntries: "grant 10, reserve 1", fromTotals: "" }
        ])
      })
    )

    it.effect(
      "an entry of a month without a partition lands in the default partition and moves into its month's when that is made",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          // four months on without running any work: no partition is made ahead
          yield* app.moveClock(monthStart(yield* app.now, 4) + 60_000 - (yield* app.now))
          const now = yield* app.now
          expect((yield* partitions())[`p${month(now)}`]).toBeUndefined()
          const m = yield* sent()
          // its grant, reservation and consumption
          expect((yield* partitions()).default).toBe(3)
          yield* app.advance(app.config.simulatorReceiptDelayMs + 1_000)
          const after = yield* partitions()
          expect(after.default).toBe(0)
          expect(after[`p${month(now)}`]).toBe(3)
          expect(yield* lotsOf(m.orgId)).toEqual([
            { amount: 10, reserved: 0, consumed: 1, fromEntries: "consume 1, grant 10, reserve 1", fromTotals: "" }
          ])
        })
    )

    it.effect("as the clock goes on, month after month, this month's partition and the next two are made ahead", () =>
      expectMonthsMadeAhead("credit_entries", 14)
    )

    it.effect.skipIf(process.env.DATABASE_URL === undefined)(
      "a drop that cannot lock the journal within its wait leaves the partition for the next round (needs PostgreSQL)",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const store = yield* LedgerStore
          const start = yield* app.now
          const m = yield* sent()
          yield* app.advance(app.config.simulatorReceiptDelayMs + 1_000)
          yield* app.advance(dayMs + 60_000)
          expect(yield* m.read()).toMatchObject({ to: "", status: "delivered" })
          // two months on, no work run yet: the month of the message is past and holds no message's entry
          yield* app.moveClock(monthStart(yield* app.now, 2) + 60_000 - (yield* app.now))
          const at = new Date(yield* app.now)
          // an admission's lock on the journal, held
          const dropped = yield* whileLocked(
            (sql) => sql`LOCK TABLE credit_entries IN ROW EXCLUSIVE MODE`,
            store.dropEmptyPartitions(at)
          )
          expect(dropped).toEqual([])
          expect((yield* partitions())[`p${month(start)}`]).toBeDefined()
          expect(yield* store.dropEmptyPartitions(at)).toContain(month(start))
          expect((yield* partitions())[`p${month(start)}`]).toBeUndefined()
        })
    )

    it.effect.skipIf(process.env.DATABASE_URL === undefined)(
      "a partition ahead that cannot be attached within its wait (a reader of the journal holds the default partition) is made at the next round (needs PostgreSQL)",
      () => expectPartitionAheadYieldsToReaders("credit_entries")
    )
  }
)
