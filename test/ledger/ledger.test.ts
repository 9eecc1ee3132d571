/** Worked examples of the credit ledger (contract section 3), each on a fresh organisation. */
import { assert, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { LedgerStore } from "../../src/ledger/LedgerStore.ts"
import { addDays, dayOf, messageUuid, nextMidnight } from "./model.ts"
import { backend, entrySums, holdRows, LedgerTestLayer, lotRows, newOrganisation, start } from "./support.ts"

const today = dayOf(start)
const [m1, m2, m3] = [messageUuid(1), messageUuid(2), messageUuid(3)]

/** Runs a test body at `start` on its own TestClock. */
const atStart = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  TestClock.setTime(start).pipe(Effect.andThen(body), Effect.provide(TestClock.layer()))

/** The reserve outcome as a value: "reserved", or the failing error's tag. */
const tryReserve = (orgId: string, reservations: ReadonlyArray<{ messageId: string; credits: number }>) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    return yield* ledger.reserve(orgId, reservations).pipe(
      Effect.as("reserved" as const),
      Effect.catchTag("InsufficientCredits", (e) => Effect.succeed(e._tag))
    )
  })

/** The ids of the organisation's lots, in grant order. */
const lotIds = (orgId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ lotId: string }>`SELECT id::text AS lot_id FROM credit_lots
      WHERE organisation_id = ${orgId} ORDER BY id`
    return rows.map((r) => Number(r.lotId))
  })

/** Draws identity values of credit_lots until the last one drawn is `last` (gaps are normal for identities). */
const skipLotIdsTo = (last: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ current }] = yield* sql<{ current: string }>`SELECT nextval(pg_get_serial_sequence('credit_lots', 'id'))::text AS current`
    const n = last - Number(current)
    if (n > 0) yield* sql`SELECT count(nextval(pg_get_serial_sequence('credit_lots', 'id'))) FROM generate_series(1, ${n})`
  })

layer(LedgerTestLayer, { excludeTestServices: true })(`Ledger examples (${backend})`, (it) => {
  it.effect("reserves across two lots, earliest expiry first, then consumes", () =>
    atStart(Effect.gen(function*() {
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
      expect(yield* ledger.totals(org)).toEqual({ granted: 8, consumed: 5, reserved: 0, available: 3, expiredUnreserved: 0 })
      expect(yield* holdRows(org)).toEqual([
        { messageId: m1, lotSeq: 0, validUntil: null, amount: 2, state: "posted" },
        { messageId: m1, lotSeq: 1, validUntil: addDays(today, 1), amount: 3, state: "posted" }
      ])
    })))

  it.effect("draws the earliest valid_until first and never-expiring lots last", () =>
    atStart(Effect.gen(function*() {
      const ledger = yield* Ledger
      const org = yield* newOrganisation
      yield* ledger.grant(org, 5, null)
      yield* ledger.grant(org, 5, addDays(today, 3))
      yield* ledger.grant(org, 5, addDays(today, 1))
      yield* ledger.reserve(org, [{ messageId: m1, credits: 6 }])
      expect((yield* lotRows(org)).map((l) => l.reserved)).toEqual([0, 1, 5])
      expect(yield* ledger.balance(org)).toEqual({ total: 15, reserved: 6, available: 9, validUntil: addDays(today, 3) })
    })))

  // Lots of one valid_until should be drawn in grant order: Ledger.reserve says
  // `ORDER BY valid_until ASC NULLS LAST, id ASC`, but its select list aliases `id::text AS id`,
  // and PostgreSQL resolves ORDER BY names to output columns first, so lots are ordered by their
  // id as text: lot 100 is drawn before lot 99.
  it.effect("lots of one valid_until are drawn in grant order, even when their ids differ in length", () =>
    atStart(Effect.gen(function*() {
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
    })))

  it.effect("release returns the credits to their lots", () =>
    atStart(Effect.gen(function*() {
      const ledger = yield* Ledger
      const org = yield* newOrganisation
      yield* ledger.grant(org, 10, addDays(today, 2))
      yield* ledger.reserve(org, [{ messageId: m1, credits: 4 }])
      expect(yield* ledger.balance(org)).toEqual({ total: 10, reserved: 4, available: 6, validUntil: addDays(today, 2) })
      yield* ledger.release(org, m1)
      expect(yield* ledger.balance(org)).toEqual({ total: 10, reserved: 0, available: 10, validUntil: addDays(today, 2) })
      expect(yield* ledger.totals(org)).toEqual({ granted: 10, consumed: 0, reserved: 0, available: 10, expiredUnreserved: 0 })
    })))

  it.effect("a reservation outlives its lot's expiry; released after it, the credits are expired", () =>
    atStart(Effect.gen(function*() {
      const ledger = yield* Ledger
      const org = yield* newOrganisation
      yield* ledger.grant(org, 5, today)
      yield* ledger.reserve(org, [{ messageId: m1, credits: 2 }, { messageId: m2, credits: 1 }])
      yield* TestClock.setTime(nextMidnight(start))
      expect(yield* ledger.balance(org)).toEqual({ total: 3, reserved: 3, available: 0, validUntil: null })
      yield* ledger.consume(org, m1)
      yield* ledger.release(org, m2)
      expect(yield* ledger.totals(org)).toEqual({ granted: 5, consumed: 2, reserved: 0, available: 0, expiredUnreserved: 3 })
    })))

  it.effect("a lot funds through its valid_until day (inclusive), not after", () =>
    atStart(Effect.gen(function*() {
      const ledger = yield* Ledger
      const org = yield* newOrganisation
      yield* ledger.grant(org, 5, today)
      yield* TestClock.setTime(nextMidnight(start) - 1) // 23:59:59.999 on valid_until
      assert.strictEqual(yield* tryReserve(org, [{ messageId: m1, credits: 1 }]), "reserved")
      expect(yield* ledger.balance(org)).toEqual({ total: 5, reserved: 1, available: 4, validUntil: today })

      yield* TestClock.setTime(nextMidnight(start)) // the next day: expired
      assert.strictEqual(yield* tryReserve(org, [{ messageId: m2, credits: 1 }]), "InsufficientCredits")
      expect(yield* ledger.balance(org)).toEqual({ total: 1, reserved: 1, available: 0, validUntil: null })
      expect(yield* ledger.totals(org)).toEqual({ granted: 5, consumed: 0, reserved: 1, available: 0, expiredUnreserved: 4 })
      expect((yield* holdRows(org)).map((h) => h.messageId)).toEqual([m1])
    })))

  it.effect("an expired lot cannot fund, even when a valid lot covers only part", () =>
    atStart(Effect.gen(function*() {
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
    })))

  it.effect("a batch is reserved all or nothing", () =>
    atStart(Effect.gen(function*() {
      const ledger = yield* Ledger
      const org = yield* newOrganisation
      yield* ledger.grant(org, 5, null)
      const batch = (credits: ReadonlyArray<number>) => credits.map((c, i) => ({ messageId: messageUuid(10 + i), credits: c }))

      assert.strictEqual(yield* tryReserve(org, batch([2, 2, 2])), "InsufficientCredits")
      expect(yield* ledger.balance(org)).toEqual({ total: 5, reserved: 0, available: 5, validUntil: null })
      expect(yield* holdRows(org)).toEqual([])

      assert.strictEqual(yield* tryReserve(org, batch([2, 2, 1])), "reserved")
      expect(yield* ledger.balance(org)).toEqual({ total: 5, reserved: 5, available: 0, validUntil: null })
      expect((yield* holdRows(org)).map((h) => h.amount)).toEqual([2, 2, 1])
    })))

  it.effect("a refusal says how many credits were needed and how many were available", () =>
    atStart(Effect.gen(function*() {
      const ledger = yield* Ledger
      const org = yield* newOrganisation
      yield* ledger.grant(org, 2, null)
      yield* ledger.grant(org, 1, addDays(today, 1))
      const error = yield* Effect.flip(ledger.reserve(org, [{ messageId: m1, credits: 2 }, { messageId: m2, credits: 2 }]))
      expect("error" in error ? error.error : error).toEqual({ code: "insufficient_credits", message: "Not enough valid credits: 4 needed, 3 available" })
    })))

  it.effect("a large grant is stored as several lots of its validity, each with its grant entry; the balance is the grant's", () =>
    atStart(Effect.gen(function*() {
      const ledger = yield* Ledger
      const org = yield* newOrganisation
      yield* ledger.grant(org, 200, addDays(today, 2))
      expect(yield* lotRows(org)).toEqual([67, 67, 66].map((amount) => ({ amount, validUntil: addDays(today, 2), reserved: 0, consumed: 0 })))
      expect((yield* entrySums(org)).map((s) => s.granted)).toEqual([67, 67, 66])
      expect(yield* ledger.balance(org)).toEqual({ total: 200, reserved: 0, available: 200, validUntil: addDays(today, 2) })
      // a reservation larger than one lot is drawn across them, in grant order
      yield* ledger.reserve(org, [{ messageId: m1, credits: 100 }])
      expect((yield* lotRows(org)).map((l) => l.reserved)).toEqual([67, 33, 0])
      expect(yield* ledger.balance(org)).toEqual({ total: 200, reserved: 100, available: 100, validUntil: addDays(today, 2) })
    })))

  it.effect("dropSettledHolds removes the posted and voided holds of the messages named, never a pending one; the entries stay", () =>
    atStart(Effect.gen(function*() {
      const [ledger, store] = [yield* Ledger, yield* LedgerStore]
      const org = yield* newOrganisation
      yield* ledger.grant(org, 10, null)
      yield* ledger.reserve(org, [{ messageId: m1, credits: 1 }, { messageId: m2, credits: 2 }, { messageId: m3, credits: 3 }])
      yield* ledger.consume(org, m1)
      yield* ledger.release(org, m2)
      const entriesBefore = yield* entrySums(org)
      const totalsBefore = yield* ledger.totals(org)
      const named = [m1, m2, m3].map((id) => ({ organisationId: org, id }))
      expect(yield* store.dropSettledHolds(named)).toBe(2)
      expect(yield* holdRows(org)).toEqual([{ messageId: m3, lotSeq: 0, validUntil: null, amount: 3, state: "pending" }])
      expect(yield* entrySums(org)).toEqual(entriesBefore)
      expect(yield* ledger.totals(org)).toEqual(totalsBefore)
      expect(yield* store.dropSettledHolds(named)).toBe(0)
      expect(yield* store.dropSettledHolds([])).toBe(0)
    })))

  it.effect("settlement is idempotent: a second consume, a late release and unknown ids are no-ops", () =>
    atStart(Effect.gen(function*() {
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
      expect(yield* holdRows(org)).toEqual([{ messageId: m1, lotSeq: 0, validUntil: null, amount: 2, state: "posted" }])
    })))
})
