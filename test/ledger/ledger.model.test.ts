/**
 * Model-based test of the SQL credit ledger (docs/decisions.md#credits): random sequences of grants,
 * reservations, settlements and clock moves run against the Ledger on a real database and against
 * the pure model of ./model.ts; after every step the two must agree on the balance, the totals,
 * every lot's counters and every hold. Reservations go through both admission paths: the general
 * one (Ledger.reserve) and the one-statement admission of a scheduled message (QuickAdmission),
 * which reserves from one lot of the earliest validity or leaves the message to the general path.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { Ledger } from "../../src/ledger/Ledger.ts"
import type { QuickAdmission } from "../../src/messages/QuickAdmission.ts"
import type { Organisations } from "../../src/organisations/Organisations.ts"
import { admitScheduledQuickly } from "../support/QuickAdmit.ts"
import { addDays, LedgerModel, type ModelReservation, nextMidnight } from "./model.ts"
import {
  backend,
  entrySums,
  holdRows,
  LedgerTestLayer,
  lotRows,
  newOrganisation,
  settlementEntries,
  start
} from "./support.ts"

type Services = Ledger | Organisations | QuickAdmission | SqlClient.SqlClient

interface Real {
  readonly orgId: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<A>
}

type LedgerCommand = fc.AsyncCommand<LedgerModel, Real>

const dayMillis = 86_400_000

const numRuns = Number(process.env.LEDGER_NUM_RUNS ?? (process.env.CI ? 1000 : 200))

/**
 * The lots' counters summed per valid_until. docs/decisions.md#credits orders drawing by valid_until only, so
 * lots of one date are compared together: which of them funds a hold is left open (see the
 * grant-order example in ledger.test.ts).
 */
const lotsByExpiry = (
  lots: ReadonlyArray<{
    readonly validUntil: string | null
    readonly amount: number
    readonly reserved: number
    readonly consumed: number
  }>
) => {
  const groups = new Map<string, { validUntil: string | null; amount: number; reserved: number; consumed: number }>()
  for (const l of lots) {
    const g = groups.get(String(l.validUntil)) ?? { validUntil: l.validUntil, amount: 0, reserved: 0, consumed: 0 }
    groups.set(String(l.validUntil), {
      ...g,
      amount: g.amount + l.amount,
      reserved: g.reserved + l.reserved,
      consumed: g.consumed + l.consumed
    })
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g)
}

/** Each message's holds summed per valid_until of their lots and state. */
const holdsByExpiry = (
  holds: ReadonlyArray<{
    readonly messageId: string
    readonly validUntil: string | null
    readonly amount: number
    readonly state: string
  }>
) => {
  const groups = new Map<string, { messageId: string; validUntil: string | null; state: string; amount: number }>()
  for (const h of holds) {
    const key = `${h.messageId} ${String(h.validUntil)} ${h.state}`
    const g = groups.get(key) ?? { messageId: h.messageId, validUntil: h.validUntil, state: h.state, amount: 0 }
    groups.set(key, { ...g, amount: g.amount + h.amount })
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g)
}

/** The database must agree with the model on everything observable, and both must satisfy the invariant. */
const verify = async (model: LedgerModel, real: Real, after: string): Promise<void> => {
  const { balance, totals, lots, holds } = await real.run(
    Effect.gen(function* () {
      const ledger = yield* Ledger
      return {
        balance: yield* ledger.balance(real.orgId),
        totals: yield* ledger.totals(real.orgId),
        lots: yield* lotRows(real.orgId),
        // a settled hold is its consume (posted) or release (voided) entry: the table keeps pending ones only
        holds: [
          ...(yield* holdRows(real.orgId)),
          ...(yield* settlementEntries(real.orgId)).map((e) => ({
            ...e,
            state: e.kind === "consume" ? "posted" : "voided"
          }))
        ]
      }
    })
  )
  const where = `after ${after} (today ${model.today})`
  expect(balance, `balance ${where}`).toEqual(model.balance())
  expect(totals, `totals ${where}`).toEqual(model.totals())
  for (const t of [totals, model.totals()]) {
    expect(t.consumed + t.reserved + t.available + t.expiredUnreserved, `invariant ${where}`).toBe(t.granted)
  }
  expect(balance.total, `balance.total ${where}`).toBe(balance.available + balance.reserved)
  expect(lotsByExpiry(lots), `lots by valid_until ${where}`).toEqual(lotsByExpiry(model.lots))
  expect(holdsByExpiry(holds), `holds by valid_until ${where}`).toEqual(
    holdsByExpiry(model.holds.map((h) => ({ ...h, validUntil: model.lots[h.lotSeq]!.validUntil })))
  )
}

class GrantCommand implements LedgerCommand {
  readonly amount: number
  readonly dayOffset: number | null
  constructor(amount: number, dayOffset: number | null) {
    this.amount = amount
    this.dayOffset = dayOffset
  }
  check = () => true
  async run(model: LedgerModel, real: Real) {
    const validUntil = this.dayOffset === null ? null : addDays(model.today, this.dayOffset)
    const amount = this.amount
    await real.run(
      Effect.gen(function* () {
        yield* (yield* Ledger).grant(real.orgId, amount, validUntil)
      })
    )
    model.grant(this.amount, validUntil)
    await verify(model, real, this.toString())
  }
  toString = () => `grant(${this.amount}, ${this.dayOffset === null ? "never" : `today+${this.dayOffset}`})`
}

class ReserveCommand implements LedgerCommand {
  readonly credits: ReadonlyArray<number>
  readonly inTransaction: boolean
  constructor(credits: ReadonlyArray<number>, inTransaction: boolean) {
    this.credits = credits
    this.inTransaction = inTransaction
  }
  check = () => true
  async run(model: LedgerModel, real: Real) {
    const reservations: ReadonlyArray<ModelReservation> = this.credits.map((credits) => ({
      messageId: model.freshMessageId(),
      credits
    }))
    const fundable = model.canFund(reservations)
    const inTransaction = this.inTransaction
    const outcome = await real.run(
      Effect.gen(function* () {
        const ledger = yield* Ledger
        const sql = yield* SqlClient.SqlClient
        const reserve = ledger.reserve(real.orgId, reservations)
        return yield* (inTransaction ? sql.withTransaction(reserve) : reserve).pipe(
          Effect.as("reserved" as const),
          Effect.catchTag("InsufficientCredits", () => Effect.succeed("insufficient" as const))
        )
      })
    )
    expect(outcome, `${this.toString()} with ${model.balance().available} available today ${model.today}`).toBe(
      fundable ? "reserved" : "insufficient"
    )
    expect(model.reserve(reservations)).toBe(fundable)
    await verify(model, real, this.toString())
  }
  toString = () => `reserve([${this.credits.join(", ")}]${this.inTransaction ? ", in transaction" : ""})`
}

/** How the quick reservations of the whole run ended: the run fails if the one-statement path never admitted. */
const quickOutcomes = { quick: 0, general: 0, insufficient: 0 }

class QuickReserveCommand implements LedgerCommand {
  readonly credits: 1 | 2
  constructor(credits: 1 | 2) {
    this.credits = credits
  }
  check = () => true
  async run(model: LedgerModel, real: Real) {
    const reservation: ModelReservation = { messageId: model.freshMessageId(), credits: this.credits }
    const fundable = model.canFund([reservation])
    const outcome = await real.run(
      Effect.gen(function* () {
        const quick = yield* admitScheduledQuickly(real.orgId, reservation.messageId, reservation.credits)
        if (quick._tag === "Admitted") return "quick" as const
        expect(quick._tag, "a new key is admitted or left to the general path").toBe("Fallback")
        // what the service does next: the general path
        return yield* (yield* Ledger).reserve(real.orgId, [reservation]).pipe(
          Effect.as("general" as const),
          Effect.catchTag("InsufficientCredits", () => Effect.succeed("insufficient" as const))
        )
      })
    )
    quickOutcomes[outcome]++
    expect(
      outcome === "insufficient",
      `${this.toString()} with ${model.balance().available} available today ${model.today}`
    ).toBe(!fundable)
    expect(model.reserve([reservation])).toBe(fundable)
    await verify(model, real, `${this.toString()} (${outcome})`)
  }
  toString = () => `quickReserve(${this.credits})`
}

/** Which message to settle: the i-th still pending one, the i-th ever reserved (maybe settled already), or one never reserved. */
type Target = { readonly pending: number } | { readonly reserved: number } | { readonly unknown: true }

class SettleCommand implements LedgerCommand {
  readonly kind: "consume" | "release"
  readonly target: Target
  constructor(kind: "consume" | "release", target: Target) {
    this.kind = kind
    this.target = target
  }
  check = () => true
  async run(model: LedgerModel, real: Real) {
    const pending = model.reservedIds.filter((id) =>
      model.holds.some((h) => h.messageId === id && h.state === "pending")
    )
    const t = this.target
    const messageId =
      "pending" in t && pending.length > 0
        ? pending[t.pending % pending.length]!
        : "reserved" in t && model.reservedIds.length > 0
          ? model.reservedIds[t.reserved % model.reservedIds.length]!
          : model.unknownMessageId()
    const kind = this.kind
    await real.run(
      Effect.gen(function* () {
        yield* (yield* Ledger)[kind](real.orgId, messageId)
      })
    )
    model[kind](messageId)
    await verify(model, real, `${this.toString()} = ${kind}(${messageId})`)
  }
  toString = () =>
    `${this.kind}(${
      "pending" in this.target
        ? `pending #${this.target.pending}`
        : "reserved" in this.target
          ? `reserved #${this.target.reserved}`
          : "unknown id"
    })`
}

type Move = { readonly by: number } | { readonly midnightsAhead: number; readonly offset: -1 | 0 }

class ClockCommand implements LedgerCommand {
  readonly move: Move
  constructor(move: Move) {
    this.move = move
  }
  check = () => true
  async run(model: LedgerModel, real: Real) {
    const target =
      "by" in this.move
        ? model.nowMillis + this.move.by
        : nextMidnight(model.nowMillis) + this.move.midnightsAhead * dayMillis + this.move.offset
    model.nowMillis = Math.max(model.nowMillis, target)
    await real.run(TestClock.setTime(model.nowMillis))
    await verify(model, real, `${this.toString()} to ${new Date(model.nowMillis).toISOString()}`)
  }
  toString = () =>
    "by" in this.move
      ? `clock += ${Duration.format(Duration.millis(this.move.by))}`
      : `clock -> midnight #${this.move.midnightsAhead + 1} ${this.move.offset === -1 ? "- 1ms" : ""}`
}

const grantArb = fc
  .record({
    // small grants are one lot; from 128 credits a grant is split into several lots (splitGrant)
    amount: fc.oneof(
      { arbitrary: fc.integer({ min: 1, max: 50 }), weight: 3 },
      { arbitrary: fc.integer({ min: 128, max: 400 }), weight: 1 }
    ),
    dayOffset: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null, freq: 3 })
  })
  .map(({ amount, dayOffset }) => new GrantCommand(amount, dayOffset))

const reserveArb = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 1, max: 2 }).map((c) => [c]),
      fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 2, maxLength: 10 })
    ),
    fc.boolean()
  )
  .map(([credits, inTransaction]) => new ReserveCommand(credits, inTransaction))

const quickReserveArb = fc.constantFrom(1 as const, 2 as const).map((credits) => new QuickReserveCommand(credits))

const settleArb = fc
  .tuple(
    fc.constantFrom("consume" as const, "release" as const),
    fc.oneof(
      { arbitrary: fc.nat({ max: 1000 }).map((pending): Target => ({ pending })), weight: 4 },
      { arbitrary: fc.nat({ max: 1000 }).map((reserved): Target => ({ reserved })), weight: 2 },
      { arbitrary: fc.constant<Target>({ unknown: true }), weight: 1 }
    )
  )
  .map(([kind, target]) => new SettleCommand(kind, target))

const clockArb = fc.oneof(
  fc.integer({ min: 0, max: 3 * dayMillis }).map((by) => new ClockCommand({ by })),
  fc.integer({ min: 0, max: 3 }).map((days) => new ClockCommand({ by: days * dayMillis })),
  fc
    .record({ midnightsAhead: fc.integer({ min: 0, max: 2 }), offset: fc.constantFrom(-1 as const, 0 as const) })
    .map((m) => new ClockCommand(m))
)

const commandsArb = fc.commands(
  [
    grantArb,
    grantArb,
    reserveArb,
    reserveArb,
    quickReserveArb,
    quickReserveArb,
    settleArb,
    settleArb,
    settleArb,
    clockArb
  ],
  { maxCommands: 30, size: "medium" }
)

layer(LedgerTestLayer, { excludeTestServices: true })(`Ledger against its model (${backend})`, (it) => {
  it.effect(
    `random sequences agree with the model after every step (numRuns ${numRuns})`,
    () =>
      Effect.gen(function* () {
        const context = yield* Effect.context<Services>()
        const run = Effect.runPromiseWith(context)
        const property = fc.asyncProperty(commandsArb, async (commands) => {
          await run(TestClock.setTime(start))
          const real: Real = { orgId: await run(newOrganisation), run }
          const model = new LedgerModel(start)
          await verify(model, real, "setup")
          await fc.asyncModelRun(() => ({ model, real }), commands)
          // Every change to a lot's counters is explained by its credit_entries rows.
          const sums = await run(entrySums(real.orgId))
          for (const s of sums) {
            expect(
              { lot: s.lotSeq, granted: s.granted, reserved: s.netReserved, consumed: s.consumedEntries },
              "credit_entries"
            ).toEqual({ lot: s.lotSeq, granted: s.amount, reserved: s.reserved, consumed: s.consumed })
          }
        })
        yield* Effect.promise(() => fc.assert(property, { numRuns }))
        expect(quickOutcomes.quick, JSON.stringify(quickOutcomes)).toBeGreaterThan(0)
        expect(quickOutcomes.general + quickOutcomes.insufficient, JSON.stringify(quickOutcomes)).toBeGreaterThan(0)
      }).pipe(Effect.provide(TestClock.layer())),
    300_000
  )
})
