/** Worked examples of the credit ledger (docs/decisions.md#credits), each on a fresh organisation. */
import { assert, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { JournalPartitions } from "../../src/ledger/JournalPartitions.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { LedgerStore } from "../../src/ledger/LedgerStore.ts"
import { appServices } from "../support/AppServices.ts"
import { addDays, dayOf, messageUuid, nextMidnight } from "./model.ts"
import {
  backend,
  entrySums,
  holdRows,
  journalMonths,
  LedgerTestLayer,
  lotRows,
  newOrganisation,
  settlementEntries,
  start,
  totalsRows
} from "./support.ts"

const today = dayOf(start)
const [m1, m2, m3] = [messageUuid(1), messageUuid(2), messageUuid(3)]

/** Runs a test body at `start` on its own TestClock. */
const atStart = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  TestClock.setTime(start).pipe(Effect.andThen(body), Effect.provide(TestClock.layer()))

/** The reserve outcome as a value: "reserved", or the failing error's tag. */
const tryReserve = (orgId: string, reservations: ReadonlyArray<{ messageId: string; credits: number }>) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    return yield* ledger.reserve(orgId, reservations).pipe(
      Effect.as("reserved" as const),
      Effect.catchTag("InsufficientCredits", (e) => Effect.succeed(e._tag))
    )
  })

/** The ids of the organisation's lots, in grant order. */
const lotIds = (orgId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ lotId: string }>`SELECT id::text AS lot_id FROM credit_lots
      WHERE organisation_id = ${orgId} ORDER BY id`
    return rows.map((r) => Number(r.lotId))
  })

/** Draws identity values of credit_lots until the last one drawn is `last` (gaps are normal for identities). */
const skipLotIdsTo = (last: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [{ current }] = yield* sql<{
      current: string
    }>`SELECT nextval(pg_get_serial_sequence('credit_lots', 'id'))::text AS current`
    const n = last - Number(current)
    if (n > 0)
      yield* sql`SELECT count(nextval(pg_get_serial_sequence('credit_lots', 'id'))) FROM generate_series(1, ${n})`
  })

layer(LedgerTestLayer, { excludeTestServices: true })(`Ledger examples (${backend})`, (it) => {
  it.effect("reserves across two lots, earliest expiry first, then consumes", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 5, null)
        yield* ledger.grant(org, 3, addDays(today, 1))

        assert.strictEqual(yield* tryReserve(org, [{ messageId: m1, credits: 5 }]), "reserved")
        // The expiring lot is drawn first and emptied; the rest comes from the never-expiring one.
        expect(yield* lotRows(org)).toEqual([
          { amount: 5, validUntil: null, reserved: 2, consumed: 0 },
          { amount: 3, validUntil: addDays(today, 1), reserved: 3, consumed: 0 }
        ])
        expect(yield* ledger.balance(org)).toEqual({ total: 8, reserved: 5, available: 3, validUntil: null })

        yield* ledger.consume(org, m1)
        expect(yield* ledger.balance(org)).toEqual({ total: 3, reserved: 0, available: 3, validUntil: null })
        expect(yield* ledger.totals(org)).toEqual({
          granted: 8,
          consumed: 5,
          reserved: 0,
          available: 3,
          expiredUnreserved: 0
        })
        // the holds are gone with the reservation; the consume entries say what each lot held
        expect(yield* holdRows(org)).toEqual([])
        expect(yield* settlementEntries(org)).toEqual([
          { messageId: m1, lotSeq: 0, validUntil: null, kind: "consume", amount: 2 },
          { messageId: m1, lotSeq: 1, validUntil: addDays(today, 1), kind: "consume", amount: 3 }
        ])
      })
    )
  )

  it.effect("draws the earliest valid_until first and never-expiring lots last", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 5, null)
        yield* ledger.grant(org, 5, addDays(today, 3))
        yield* ledger.grant(org, 5, addDays(today, 1))
        yield* ledger.reserve(org, [{ messageId: m1, credits: 6 }])
        expect((yield* lotRows(org)).map((l) => l.reserved)).toEqual([0, 1, 5])
        expect(yield* ledger.balance(org)).toEqual({
          total: 15,
          reserved: 6,
          available: 9,
          validUntil: addDays(today, 3)
        })
      })
    )
  )

  // Lots of one valid_until should be drawn in grant order: Ledger.reserve says
  // `ORDER BY valid_until ASC NULLS LAST, id ASC`, but its select list aliases `id::text AS id`,
  // and PostgreSQL resolves ORDER BY names to output columns first, so lots are ordered by their
  // id as text: lot 100 is drawn before lot 99.
  it.effect("lots of one valid_until are drawn in grant order, even when their ids differ in length", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const day = addDays(today, 2)
        // Lot A: its id must not be a power of ten (no longer id sorts before "100" as text).
        let org = yield* newOrganisation
        yield* ledger.grant(org, 1, day)
        while (/^10*$/.test(String((yield* lotIds(org))[0]))) {
          org = yield* newOrganisation
          yield* ledger.grant(org, 1, day)
        }
        const [a] = yield* lotIds(org)
        // Lot B, granted after A, gets an id one digit longer: after A as a number, before it as text.
        yield* skipLotIdsTo(10 ** String(a).length - 1)
        yield* ledger.grant(org, 1, day)
        const [, b] = yield* lotIds(org)
        assert.isTrue(b! > a! && String(b) < String(a), `precondition: lot ids ${a} then ${b}`)

        yield* ledger.reserve(org, [{ messageId: m1, credits: 1 }])
        // Expected: the first-granted lot A funds the reservation.
        expect(yield* lotRows(org), `lots ${a} and ${b}, both valid until ${day}`).toEqual([
          { amount: 1, validUntil: day, reserved: 1, consumed: 0 },
          { amount: 1, validUntil: day, reserved: 0, consumed: 0 }
        ])
      })
    )
  )

  it.effect("release returns the credits to their lots", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 10, addDays(today, 2))
        yield* ledger.reserve(org, [{ messageId: m1, credits: 4 }])
        expect(yield* ledger.balance(org)).toEqual({
          total: 10,
          reserved: 4,
          available: 6,
          validUntil: addDays(today, 2)
        })
        yield* ledger.release(org, m1)
        expect(yield* ledger.balance(org)).toEqual({
          total: 10,
          reserved: 0,
          available: 10,
          validUntil: addDays(today, 2)
        })
        expect(yield* ledger.totals(org)).toEqual({
          granted: 10,
          consumed: 0,
          reserved: 0,
          available: 10,
          expiredUnreserved: 0
        })
      })
    )
  )

  it.effect("a reservation outlives its lot's expiry; released after it, the credits are expired", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 5, today)
        yield* ledger.reserve(org, [
          { messageId: m1, credits: 2 },
          { messageId: m2, credits: 1 }
        ])
        yield* TestClock.setTime(nextMidnight(start))
        expect(yield* ledger.balance(org)).toEqual({ total: 3, reserved: 3, available: 0, validUntil: null })
        yield* ledger.consume(org, m1)
        yield* ledger.release(org, m2)
        expect(yield* ledger.totals(org)).toEqual({
          granted: 5,
          consumed: 2,
          reserved: 0,
          available: 0,
          expiredUnreserved: 3
        })
      })
    )
  )

  it.effect("a lot funds through its valid_until day (inclusive), not after", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 5, today)
        yield* TestClock.setTime(nextMidnight(start) - 1) // 23:59:59.999 on valid_until
        assert.strictEqual(yield* tryReserve(org, [{ messageId: m1, credits: 1 }]), "reserved")
        expect(yield* ledger.balance(org)).toEqual({ total: 5, reserved: 1, available: 4, validUntil: today })

        yield* TestClock.setTime(nextMidnight(start)) // the next day: expired
        assert.strictEqual(yield* tryReserve(org, [{ messageId: m2, credits: 1 }]), "InsufficientCredits")
        expect(yield* ledger.balance(org)).toEqual({ total: 1, reserved: 1, available: 0, validUntil: null })
        expect(yield* ledger.totals(org)).toEqual({
          granted: 5,
          consumed: 0,
          reserved: 1,
          available: 0,
          expiredUnreserved: 4
        })
        expect((yield* holdRows(org)).map((h) => h.messageId)).toEqual([m1])
      })
    )
  )

  it.effect("an expired lot cannot fund, even when a valid lot covers only part", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 10, addDays(today, 1))
        yield* ledger.grant(org, 2, null)
        yield* TestClock.adjust("2 days")
        assert.strictEqual(yield* tryReserve(org, [{ messageId: m1, credits: 3 }]), "InsufficientCredits")
        assert.strictEqual(yield* tryReserve(org, [{ messageId: m1, credits: 2 }]), "reserved")
        expect(yield* lotRows(org)).toEqual([
          { amount: 10, validUntil: addDays(today, 1), reserved: 0, consumed: 0 },
          { amount: 2, validUntil: null, reserved: 2, consumed: 0 }
        ])
      })
    )
  )

  it.effect("a batch is reserved all or nothing", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 5, null)
        const batch = (credits: ReadonlyArray<number>) =>
          credits.map((c, i) => ({ messageId: messageUuid(10 + i), credits: c }))

        assert.strictEqual(yield* tryReserve(org, batch([2, 2, 2])), "InsufficientCredits")
        expect(yield* ledger.balance(org)).toEqual({ total: 5, reserved: 0, available: 5, validUntil: null })
        expect(yield* holdRows(org)).toEqual([])

        assert.strictEqual(yield* tryReserve(org, batch([2, 2, 1])), "reserved")
        expect(yield* ledger.balance(org)).toEqual({ total: 5, reserved: 5, available: 0, validUntil: null })
        expect((yield* holdRows(org)).map((h) => h.amount)).toEqual([2, 2, 1])
      })
    )
  )

  it.effect("a refusal says how many credits were needed and how many were available", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 2, null)
        yield* ledger.grant(org, 1, addDays(today, 1))
        const error = yield* Effect.flip(
          ledger.reserve(org, [
            { messageId: m1, credits: 2 },
            { messageId: m2, credits: 2 }
          ])
        )
        expect("error" in error ? error.error : error).toEqual({
          code: "insufficient_credits",
          message: "Not enough valid credits: 4 needed, 3 available"
        })
      })
    )
  )

  it.effect(
    "a large grant is stored as several lots of its validity, each with its grant entry; the balance is the grant's",
    () =>
      atStart(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const org = yield* newOrganisation
          yield* ledger.grant(org, 200, addDays(today, 2))
          expect(yield* lotRows(org)).toEqual(
            [67, 67, 66].map((amount) => ({ amount, validUntil: addDays(today, 2), reserved: 0, consumed: 0 }))
          )
          expect((yield* entrySums(org)).map((s) => s.granted)).toEqual([67, 67, 66])
          expect(yield* ledger.balance(org)).toEqual({
            total: 200,
            reserved: 0,
            available: 200,
            validUntil: addDays(today, 2)
          })
          // a reservation larger than one lot is drawn across them, in grant order
          yield* ledger.reserve(org, [{ messageId: m1, credits: 100 }])
          expect((yield* lotRows(org)).map((l) => l.reserved)).toEqual([67, 33, 0])
          expect(yield* ledger.balance(org)).toEqual({
            total: 200,
            reserved: 100,
            available: 100,
            validUntil: addDays(today, 2)
          })
        })
      )
  )

  it.effect(
    "settlement removes the holds of the messages it settles, never another's pending one; entries say what they held",
    () =>
      atStart(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const org = yield* newOrganisation
          yield* ledger.grant(org, 10, null)
          yield* ledger.reserve(org, [
            { messageId: m1, credits: 1 },
            { messageId: m2, credits: 2 },
            { messageId: m3, credits: 3 }
          ])
          yield* ledger.consume(org, m1)
          yield* ledger.release(org, m2)
          expect(yield* holdRows(org)).toEqual([
            { messageId: m3, lotSeq: 0, validUntil: null, amount: 3, state: "pending" }
          ])
          expect(yield* settlementEntries(org)).toEqual([
            { messageId: m1, lotSeq: 0, validUntil: null, kind: "consume", amount: 1 },
            { messageId: m2, lotSeq: 0, validUntil: null, kind: "release", amount: 2 }
          ])
          expect(yield* entrySums(org)).toEqual([
            { lotSeq: 0, amount: 10, reserved: 3, consumed: 1, granted: 10, netReserved: 3, consumedEntries: 1 }
          ])
          expect(yield* ledger.totals(org)).toEqual({
            granted: 10,
            consumed: 1,
            reserved: 3,
            available: 6,
            expiredUnreserved: 0
          })
        })
      )
  )

  it.effect("settlement is idempotent: a second consume, a late release and unknown ids are no-ops", () =>
    atStart(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const org = yield* newOrganisation
        yield* ledger.grant(org, 5, null)
        yield* ledger.reserve(org, [{ messageId: m1, credits: 2 }])
        yield* ledger.consume(org, m1)
        const once = { granted: 5, consumed: 2, reserved: 0, available: 3, expiredUnreserved: 0 }
        expect(yield* ledger.totals(org)).toEqual(once)

        yield* ledger.consume(org, m1)
        yield* ledger.release(org, m1)
        yield* ledger.consume(org, m3)
        yield* ledger.release(org, m3)
        expect(yield* ledger.totals(org)).toEqual(once)
        expect(yield* holdRows(org)).toEqual([])
        expect(yield* settlementEntries(org)).toEqual([
          { messageId: m1, lotSeq: 0, validUntil: null, kind: "consume", amount: 2 }
        ])
      })
    )
  )
})

// The journal's monthly partitions and what retention folds (issue 23), on a database of their own
// where no background loop runs (the service clock in test mode): partitions are the database's,
// and a loop's upkeep would drop an emptied past month under the test's feet.
layer(appServices({ label: "ledger_journal", config: { clock: "test" } }), { excludeTestServices: true })(
  `Ledger journal (${backend})`,
  (it) => {
    const autumn = Date.UTC(2025, 9, 10, 12, 0, 0)
    const atAutumn = <A, E, R>(body: Effect.Effect<A, E, R>) =>
      TestClock.setTime(autumn).pipe(Effect.andThen(body), Effect.provide(TestClock.layer()))

    it.effect(
      "erasure's fold: a message's entries become its lot's monthly totals, counted; the counters and the journal's sums unchanged",
      () =>
        atAutumn(
          Effect.gen(function* () {
            const [ledger, store] = [yield* Ledger, yield* LedgerStore]
            const org = yield* newOrganisation
            yield* ledger.grant(org, 10, null)
            yield* ledger.reserve(org, [
              { messageId: m1, credits: 2 },
              { messageId: m2, credits: 3 }
            ])
            yield* ledger.consume(org, m1)
            yield* ledger.release(org, m2)
            const sums = yield* entrySums(org)
            const at = new Date(autumn)
            expect(
              yield* store.foldMessageEntries(
                [
                  { organisationId: org, id: m1 },
                  { organisationId: org, id: m2 }
                ],
                at
              )
            ).toBe(4)
            expect(yield* settlementEntries(org)).toEqual([])
            expect(yield* totalsRows(org)).toEqual([
              { lotSeq: 0, month: "2025-10-01", kind: "consume", amount: 2, entries: 1 },
              { lotSeq: 0, month: "2025-10-01", kind: "release", amount: 3, entries: 1 },
              { lotSeq: 0, month: "2025-10-01", kind: "reserve", amount: 5, entries: 2 }
            ])
            expect(yield* entrySums(org)).toEqual(sums)
            // folded once: nothing left to fold
            expect(yield* store.foldMessageEntries([{ organisationId: org, id: m1 }], at)).toBe(0)
            expect(yield* store.foldMessageEntries([], at)).toBe(0)
          })
        )
    )

    it.effect(
      "partitions: made for a month and those ahead; a past one holding no message's entry dropped, its grants folded; one holding some kept",
      () =>
        atAutumn(
          Effect.gen(function* () {
            const [ledger, store] = [yield* Ledger, yield* LedgerStore]
            const partitions = yield* JournalPartitions
            // upkeep at the clock's month makes it and the two after it
            expect(yield* partitions.upkeep).toBe(0)
            expect(yield* journalMonths).toEqual(expect.arrayContaining(["202510", "202511", "202512"]))
            expect((yield* journalMonths).filter((m) => m < "202510")).toEqual([])
            const [kept, emptied] = [yield* newOrganisation, yield* newOrganisation]
            yield* ledger.grant(kept, 5, null)
            yield* ledger.reserve(kept, [{ messageId: m1, credits: 1 }])
            // the next month: a grant only, and a message whose entries retention then folds
            yield* TestClock.setTime(Date.UTC(2025, 10, 10))
            yield* ledger.grant(emptied, 7, null)
            yield* ledger.reserve(emptied, [{ messageId: m2, credits: 2 }])
            yield* ledger.consume(emptied, m2)
            const [keptSums, emptiedSums] = [yield* entrySums(kept), yield* entrySums(emptied)]
            yield* store.foldMessageEntries([{ organisationId: emptied, id: m2 }], new Date(Date.UTC(2025, 10, 12)))

            // in December: October still holds a message's entry, November only a grant
            expect(yield* store.dropEmptyPartitions(new Date(Date.UTC(2025, 11, 15)))).toEqual(["202511"])
            expect(yield* journalMonths).toEqual(expect.arrayContaining(["202510", "202512"]))
            expect(yield* journalMonths).not.toContain("202511")
            expect(yield* totalsRows(emptied)).toEqual([
              { lotSeq: 0, month: "2025-11-01", kind: "consume", amount: 2, entries: 1 },
              { lotSeq: 0, month: "2025-11-01", kind: "grant", amount: 7, entries: 1 },
              { lotSeq: 0, month: "2025-11-01", kind: "reserve", amount: 2, entries: 1 }
            ])
            expect(yield* entrySums(emptied)).toEqual(emptiedSums)
            expect(yield* entrySums(kept)).toEqual(keptSums)
            expect(yield* totalsRows(kept)).toEqual([])
            // this month's partition is never looked at, nor a later one
            expect(yield* store.dropEmptyPartitions(new Date(Date.UTC(2025, 9, 20)))).toEqual([])
            expect(yield* journalMonths).toContain("202510")
          })
        )
    )
  }
)
