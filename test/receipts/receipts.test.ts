/**
 * Receipts at the level of the store (src/receipts/Receipts.ts, Inbox.ts), on the test clock:
 * an SMSC that gives ids again after a restart (a receipt goes to the newest accepted message of
 * its id and number, a repeat changes nothing; neither is stored), a receipt applied in the
 * statement that receives it (after waiting for its acceptance when this process is settling it), a
 * receipt waiting while a message of its number is still being settled, a delivery never dated
 * before its acceptance, one bad receipt among good ones stored alone (handed in one by one, or as
 * a provider's round), unmatched receipts kept 7
 * days and at most 10,000 per route, and an `unknown` message without the provider's id matched
 * to the one receipt that fits its number and submission window, never to an ambiguous one.
 */
import { Clock, Deferred, Effect, Exit, Fiber, Metric } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { Receipts, unmatchedPerRouteMax, unmatchedTtlMs } from "../../src/receipts/Receipts.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { AcceptancesInFlight } from "../../src/messages/AcceptancesInFlight.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { type Outcome, Settlement } from "../../src/messages/Settlement.ts"
import { receiptsDropped } from "../../src/observability/Metrics.ts"
import { type IncomingReceipt, ProviderInbox } from "../../src/provider/Provider.ts"
import { create } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const verifyIntervalMs = 1_000

const number = (i: number) => `+2613455${String(i).padStart(5, "0")}`

/** A message handed to the provider at the clock's now, its credit reserved, its outcome not yet settled. */
const handedOver = (orgId: string, to: string) =>
  Effect.gen(function* () {
    const store = yield* MessageStore
    const id = randomUUID()
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* store.insert(
      orgId,
      [
        {
          id,
          batchId: null,
          batchPosition: null,
          toNumber: to,
          senderName: "INFO",
          text: "receipt me",
          segments: 1,
          status: "processing",
          sendAt: null,
          workerId: null
        }
      ],
      at
    )
    yield* (yield* Ledger).reserve(orgId, [{ messageId: id, credits: 1 }])
    yield* store.markSubmitted(orgId, [id], at)
    return { message: (yield* store.find(orgId, id))!, at }
  })

/** A message handed to the provider at the clock's now, then given `outcome` (Accepted with a provider id, or Unknown). */
const sent = (orgId: string, to: string, outcome: Outcome) =>
  Effect.gen(function* () {
    const { message, at } = yield* handedOver(orgId, to)
    yield* (yield* Settlement).settle(message, outcome, "provider")
    return { id: message.id, at }
  })

const receive = (receipts: ReadonlyArray<IncomingReceipt>) =>
  Effect.gen(function* () {
    const inbox = yield* ProviderInbox
    return yield* Effect.forEach(receipts, (r) => Effect.exit(inbox.receipt(r)), { concurrency: "unbounded" })
  })

const receipt = (
  providerRef: string,
  recipient: string | null,
  overrides: Partial<IncomingReceipt> = {}
): IncomingReceipt => ({
  providerRef,
  outcome: "delivered",
  occurredAt: new Date(),
  recipient,
  submittedAt: null,
  ...overrides
})

/** The message's status, delivery time and timeline as `from>to@source`. */
const facts = (orgId: string, id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [m] = yield* sql<{
      status: string
      deliveryTime: Date | null
      updatedAt: Date
    }>`SELECT status, delivery_time, updated_at
      FROM messages WHERE organisation_id = ${orgId} AND id = ${id}`
    // through the store: the rows, or the message's own row once compaction collapsed them
    const timeline = yield* (yield* MessageStore).timeline(orgId, id)
    return {
      status: m!.status,
      deliveryTime: m!.deliveryTime,
      transitions: timeline.map((e) => `${e.fromStatus ?? ""}>${e.toStatus}@${e.source}`)
    }
  })

const pendingOf = (providerRef: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{
        n: number
      }>`SELECT count(*)::integer AS n FROM provider_receipts WHERE provider_ref = ${providerRef} AND state = 'pending'`
  ).pipe(Effect.map(([r]) => r!.n))

const accepted = [">processing@admission", "processing>accepted@provider"]

withApp({ label: "receipts", config: { clock: "test", verifyIntervalMs } })(`receipts (${backend})`, (it) => {
  it.effect(
    "an SMSC giving ids again: each receipt goes to the newest accepted message of its id and number; a repeat changes nothing",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 10 })
        // before the SMSC's restart: id 1 to A, id 7 to N
        const a = yield* sent(orgId, number(1), { _tag: "Accepted", providerRef: "sim:1" })
        const n1 = yield* sent(orgId, number(3), { _tag: "Accepted", providerRef: "sim:7" })
        yield* receive([receipt("sim:1", number(1)), receipt("sim:7", number(3))])
        yield* app.advance(1_000)
        // after it: id 1 again to B, id 7 again to N
        const b = yield* sent(orgId, number(2), { _tag: "Accepted", providerRef: "sim:1" })
        const n2 = yield* sent(orgId, number(3), { _tag: "Accepted", providerRef: "sim:7" })
        yield* receive([receipt("sim:1", number(2), { outcome: "undeliverable" }), receipt("sim:7", number(3))])
        yield* app.advance(1_000)
        const delivered = [...accepted, "accepted>delivered@receipt"]
        expect((yield* facts(orgId, a.id)).transitions).toEqual(delivered)
        expect((yield* facts(orgId, b.id)).transitions).toEqual([...accepted, "accepted>undeliverable@receipt"])
        expect((yield* facts(orgId, n1.id)).transitions).toEqual(delivered)
        expect((yield* facts(orgId, n2.id)).transitions).toEqual(delivered)
        // the first receipt of A again: a repeat, ignored; no receipt of the ref is kept (applied ones live on in their messages)
        yield* receive([receipt("sim:1", number(1), { outcome: "undeliverable" })])
        yield* app.advance(1_000)
        expect((yield* facts(orgId, a.id)).transitions).toEqual(delivered)
        const stored = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ n: number }>`SELECT count(*)::integer AS n FROM provider_receipts WHERE provider_ref = 'sim:1'`
        )
        expect(stored[0]!.n).toBe(0)
      })
  )

  it.effect(
    "a receipt whose message is accepted is applied in the statement that receives it; neither it nor a repeat is stored",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 10 })
        const m = yield* sent(orgId, number(5), { _tag: "Accepted", providerRef: "sim:at-once" })
        const storedStates = () =>
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{ state: string }>`SELECT state FROM provider_receipts WHERE provider_ref = 'sim:at-once' ORDER BY id`
          ).pipe(Effect.map((rows) => rows.map((r) => r.state)))
        // the clock stands still: no applier round runs
        yield* receive([receipt("sim:at-once", number(5))])
        expect((yield* facts(orgId, m.id)).transitions).toEqual([...accepted, "accepted>delivered@receipt"])
        expect(yield* storedStates()).toEqual([])
        yield* receive([receipt("sim:at-once", number(5), { outcome: "undeliverable" })])
        expect((yield* facts(orgId, m.id)).status).toBe("delivered")
        expect(yield* storedStates()).toEqual([])
      })
  )

  it.effect(
    "a receipt arriving while this process settles its message's acceptance waits for it, then is applied at once",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 10 })
        const { message } = yield* handedOver(orgId, number(30))
        // the settlement of its acceptance, held open until the receipt has reached the inbox
        const gate = Deferred.makeUnsafe<void>()
        const settling = yield* Effect.forkChild(
          Effect.gen(function* () {
            const acceptances = yield* AcceptancesInFlight
            const settlement = yield* Settlement
            yield* acceptances.settling(
              "sim:waits",
              Deferred.await(gate).pipe(
                Effect.andThen(settlement.settle(message, { _tag: "Accepted", providerRef: "sim:waits" }, "provider"))
              )
            )
          })
        )
        let received = false
        const receiving = yield* Effect.forkChild(
          receive([receipt("sim:waits", number(30))]).pipe(Effect.tap(() => Effect.sync(() => (received = true))))
        )
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        expect(received).toBe(false)
        Deferred.doneUnsafe(gate, Effect.void)
        yield* Fiber.join(settling)
        expect((yield* Fiber.join(receiving)).every(Exit.isSuccess)).toBe(true)
        // the clock stood still: no retry ran, the statement that received it applied it
        expect((yield* facts(orgId, message.id)).transitions).toEqual([
          ">processing@admission",
          "processing>accepted@provider",
          "accepted>delivered@receipt"
        ])
        expect(yield* pendingOf("sim:waits")).toBe(0)
      })
  )

  it.effect(
    "a receipt whose message of that number is still being settled waits for it, rather than taking an older final one",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 10 })
        const old = yield* sent(orgId, number(10), { _tag: "Accepted", providerRef: "sim:42" })
        yield* receive([receipt("sim:42", number(10))])
        yield* app.advance(1_000)
        // a new message to the same number, still processing when its receipt (same id, reused) comes;
        // the clock stands still meanwhile (no recovery of it)
        const applyDue = Effect.flatMap(Receipts, (r) => r.applyDue)
        const fresh = yield* Effect.gen(function* () {
          const store = yield* MessageStore
          const id = randomUUID()
          yield* store.insert(
            orgId,
            [
              {
                id,
                batchId: null,
                batchPosition: null,
                toNumber: number(10),
                senderName: "INFO",
                text: "x",
                segments: 1,
                status: "processing",
                sendAt: null,
                workerId: null
              }
            ],
            new Date(yield* Clock.currentTimeMillis)
          )
          return (yield* store.find(orgId, id))!
        })
        // decided as it is stored: pending, and not due again before its first retry
        yield* receive([receipt("sim:42", number(10), { outcome: "undeliverable" })])
        expect(yield* pendingOf("sim:42")).toBe(1)
        expect(yield* applyDue).toMatchObject({ pending: 0, ignored: 0, delivered: 0, undeliverable: 0 })
        expect((yield* facts(orgId, old.id)).transitions).toEqual([...accepted, "accepted>delivered@receipt"])
        yield* Effect.flatMap(Settlement, (s) =>
          s.settle(fresh, { _tag: "Accepted", providerRef: "sim:42" }, "provider")
        )
        yield* Effect.flatMap(Receipts, (r) => r.retryNow(["sim:42"]))
        expect(yield* applyDue).toMatchObject({ pending: 0, undeliverable: 1 })
        expect((yield* facts(orgId, fresh.id)).transitions).toEqual([
          ">processing@admission",
          "processing>accepted@provider",
          "accepted>undeliverable@receipt"
        ])
        expect((yield* facts(orgId, old.id)).transitions).toEqual([...accepted, "accepted>delivered@receipt"])
      })
  )

  it.effect(
    "never dates a delivery before its acceptance: a done date that is earlier gives way to the acceptance",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId } = yield* app.newOrg({ credits: 10 })
        const m = yield* sent(orgId, number(20), { _tag: "Accepted", providerRef: "sim:d-1" })
        yield* app.advance(5_000)
        yield* receive([receipt("sim:d-1", number(20), { occurredAt: new Date(m.at.getTime() - 50_000) })])
        yield* app.advance(1_000)
        const f = yield* facts(orgId, m.id)
        expect(f.status).toBe("delivered")
        expect(f.deliveryTime).toEqual(m.at)
      })
  )

  it.effect("stores the good receipts of a set holding one the database refuses; only the bad one's caller fails", () =>
    Effect.gen(function* () {
      const refs = Array.from({ length: 9 }, () => `sim:${randomUUID()}`)
      const exits = yield* receive([
        ...refs.slice(0, 4).map((r) => receipt(r, null)),
        receipt("sim:bad\u0000id", null),
        ...refs.slice(4).map((r) => receipt(r, null))
      ])
      expect(exits.map(Exit.isSuccess)).toEqual([true, true, true, true, false, true, true, true, true, true])
      for (const ref of refs) expect(yield* pendingOf(ref), ref).toBe(1)
    })
  )

  it.effect(
    "a round of receipts handed in at once is stored together; one the database refuses keeps back only itself",
    () =>
      Effect.gen(function* () {
        const inbox = yield* ProviderInbox
        const refs = Array.from({ length: 9 }, () => `sim:${randomUUID()}`)
        expect(yield* inbox.receipts(refs.slice(0, 3).map((r) => receipt(r, null)))).toEqual([true, true, true])
        const stored = yield* inbox.receipts([
          ...refs.slice(3, 6).map((r) => receipt(r, null)),
          receipt("sim:bad\u0000id", null),
          ...refs.slice(6).map((r) => receipt(r, null))
        ])
        expect(stored).toEqual([true, true, true, false, true, true, true])
        for (const ref of refs) expect(yield* pendingOf(ref), ref).toBe(1)
      })
  )

  it.effect("keeps an unmatched receipt 7 days, and at most 10,000 per route, the oldest dropped first", () =>
    Effect.gen(function* () {
      const app = yield* App
      const expired = `sim:${randomUUID()}`
      yield* receive([receipt(expired, number(30))])
      yield* app.advance(1_000)
      expect(yield* pendingOf(expired)).toBe(1)
      const expiredBefore = yield* Metric.value(receiptsDropped.expired)
      yield* app.advance(unmatchedTtlMs)
      expect(yield* pendingOf(expired)).toBe(0)
      expect((yield* Metric.value(receiptsDropped.expired)).count).toBeGreaterThan(expiredBefore.count)

      const over = 25
      const dropped = yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* sql`INSERT INTO provider_receipts (provider_ref, outcome, occurred_at, received_at, next_attempt_at, attempts)
          SELECT 'flood:' || i, 'delivered', ${at}, ${at}::timestamptz - make_interval(secs => i), ${new Date(at.getTime() + 3_600_000)}, 1
          FROM generate_series(1, ${unmatchedPerRouteMax + over}) AS i`
        yield* sql`INSERT INTO provider_receipts (provider_ref, outcome, occurred_at, received_at, next_attempt_at, attempts)
          SELECT 'calm:' || i, 'delivered', ${at}, ${at}, ${new Date(at.getTime() + 3_600_000)}, 1 FROM generate_series(1, 5) AS i`
        const n = yield* (yield* Receipts).dropUnmatched
        const left = yield* sql<{
          route: string
          n: number
          newest: number
        }>`SELECT split_part(provider_ref, ':', 1) AS route,
            count(*)::integer AS n, min(split_part(provider_ref, ':', 2)::integer) AS newest
          FROM provider_receipts WHERE state = 'pending' AND provider_ref ~ '^(flood|calm):' GROUP BY 1 ORDER BY 1`
        yield* sql`DELETE FROM provider_receipts WHERE provider_ref ~ '^(flood|calm):'`
        return { n, left }
      })
      expect(dropped.n).toBe(over)
      // the newest kept: received i seconds ago, so the first ones
      expect(dropped.left).toEqual([
        { route: "calm", n: 5, newest: 1 },
        { route: "flood", n: unmatchedPerRouteMax, newest: 1 }
      ])
    })
  )

  /** An immediate send to the number the simulator never tells anything of: `unknown`, without the provider's id, for good. */
  const unknownForGood = (apiKey: string) =>
    Effect.gen(function* () {
      const app = yield* App
      const at = new Date(yield* app.now)
      const { id, reply } = yield* create(apiKey, {
        to: testNumbers.unknownForGood,
        text: `lost answer ${randomUUID()}`
      })
      expect(reply.status, reply.text).toBe(502)
      return { id, at }
    })

  it.effect(
    "an unknown message without the provider's id is accepted by the one receipt that fits its number and submission window",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const m = yield* unknownForGood(apiKey)
        // receipts write their submit date to the minute
        const minute = new Date(Math.floor(m.at.getTime() / 60_000) * 60_000)
        yield* receive([receipt("sim:orphan-1", testNumbers.unknownForGood, { submittedAt: minute })])
        yield* app.advance(verifyIntervalMs)
        expect((yield* facts(orgId, m.id)).transitions).toEqual([
          ">processing@admission",
          "processing>unknown@provider",
          "unknown>accepted@matched_receipt",
          "accepted>delivered@receipt"
        ])
        const totals = yield* Effect.flatMap(Ledger, (l) => l.totals(orgId))
        expect(totals).toMatchObject({ consumed: 1, reserved: 0 })
      })
  )

  it.effect(
    "leaves unknown what a receipt cannot tell apart (two messages of one number in one window), or whose window it misses",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        yield* app.advance(3_600_000)
        const twin1 = yield* unknownForGood(apiKey)
        const twin2 = yield* unknownForGood(apiKey)
        yield* receive([receipt("sim:twin", testNumbers.unknownForGood, { submittedAt: twin1.at })])
        yield* app.advance(3_600_000)
        const late = yield* unknownForGood(apiKey)
        yield* receive([
          receipt("sim:late", testNumbers.unknownForGood, { submittedAt: new Date(late.at.getTime() - 600_000) })
        ])
        yield* app.advance(10 * verifyIntervalMs)
        for (const m of [twin1, twin2, late]) expect((yield* facts(orgId, m.id)).status, m.id).toBe("unknown")
        expect(yield* pendingOf("sim:twin")).toBe(1)
        expect(yield* pendingOf("sim:late")).toBe(1)
      })
  )
})
