/**
 * The credit ledger (docs/decisions.md#credits), in the style of two-phase transfers: a grant is a lot;
 * admission reserves (pending) credits from valid lots, earliest expiry first; the provider's
 * answer consumes (posts) or releases (voids) them. The tables are LedgerStore's; expiry is
 * judged with the Clock.
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { allocate } from "../domain/Credits.ts"
import { InsufficientCredits } from "../domain/Errors.ts"
import { now, today } from "../clock/Time.ts"
import { type HoldSettlement, LedgerStore, type LedgerTotals } from "./LedgerStore.ts"

export type { HoldSettlement } from "./LedgerStore.ts"

export interface BalanceView {
  readonly total: number
  readonly reserved: number
  readonly available: number
  readonly validUntil: string | null
}

export interface Reservation {
  readonly messageId: string
  readonly credits: number
}

// Stryker disable StringLiteral: the service's key ("sms/Ledger" below) is unique whatever its text
export class Ledger extends Context.Service<
  Ledger,
  {
    /** Adds a lot of `amount` credits valid through `validUntil` (inclusive UTC date; null = never expires). */
    readonly grant: (
      organisationId: string,
      amount: number,
      validUntil: string | null
    ) => Effect.Effect<void, DatabaseUnavailable>
    /** Reserves each message's credits from valid lots, all or nothing; fails InsufficientCredits. Atomic with the caller's transaction. */
    readonly reserve: (
      organisationId: string,
      reservations: ReadonlyArray<Reservation>
    ) => Effect.Effect<void, InsufficientCredits | DatabaseUnavailable>
    /**
     * Posts (consume) or voids (release) the pending reservations of a set of messages in one
     * statement, touching each lot once; a message with nothing pending is left alone.
     */
    readonly settle: (settlements: ReadonlyArray<HoldSettlement>) => Effect.Effect<void, DatabaseUnavailable>
    /** Posts a message's pending reservation: its credits are spent. A no-op when nothing is pending. */
    readonly consume: (organisationId: string, messageId: string) => Effect.Effect<void, DatabaseUnavailable>
    /** Voids a message's pending reservation: its credits return to their lots. A no-op when nothing is pending. */
    readonly release: (organisationId: string, messageId: string) => Effect.Effect<void, DatabaseUnavailable>
    /** The balance of docs/integrators.md#balance, as of the Clock's today. */
    readonly balance: (organisationId: string) => Effect.Effect<BalanceView, DatabaseUnavailable>
    /** Every bucket of the ledger invariant, as of the Clock's today. */
    readonly totals: (organisationId: string) => Effect.Effect<Omit<LedgerTotals, "validUntil">, DatabaseUnavailable>
  }
>()("sms/Ledger") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(
    Ledger,
    Effect.gen(function* () {
      const store = yield* LedgerStore

      // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
      const reserve = Effect.fn("Ledger.reserve")(function* (
        organisationId: string,
        reservations: ReadonlyArray<Reservation>
      ) {
        const needed = reservations.reduce((sum, r) => sum + r.credits, 0)
        // Stryker disable next-line ConditionalExpression: equivalent, nothing to reserve then inserts and updates no row; the return saves the statements
        if (needed === 0) return
        const [day, at] = [yield* today, yield* now]
        // the lots that can fund the reservation, locked in the order they are drawn from
        const lots = yield* store.lockFreeLots(organisationId, day)
        const holds = allocate(lots, reservations)
        if (holds === undefined) {
          const available = lots.reduce((sum, l) => sum + l.free, 0)
          return yield* InsufficientCredits.withMessage(
            `Not enough valid credits: ${needed} needed, ${available} available`
          )
        }
        yield* store.hold(organisationId, holds, at)
      })

      // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
      const totals = Effect.fn("Ledger.totals")(function* (organisationId: string) {
        return yield* store.totals(organisationId, yield* today)
      })

      // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
      const settle = Effect.fn("Ledger.settle")(function* (settlements: ReadonlyArray<HoldSettlement>) {
        // Stryker disable next-line ConditionalExpression: equivalent, an empty set updates no row; the return saves the statement
        if (settlements.length === 0) return
        yield* store.settle(settlements, yield* now)
      })

      return Ledger.of({
        // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
        grant: Effect.fn("Ledger.grant")(function* (organisationId: string, amount: number, validUntil: string | null) {
          yield* store.grant(organisationId, amount, validUntil, yield* now)
        }),
        reserve,
        settle,
        consume: (organisationId, messageId) => settle([{ organisationId, messageId, kind: "consume" }]),
        release: (organisationId, messageId) => settle([{ organisationId, messageId, kind: "release" }]),
        totals: (organisationId) => totals(organisationId).pipe(Effect.map(({ validUntil: _, ...t }) => t)),
        balance: (organisationId) =>
          totals(organisationId).pipe(
            Effect.map((t) => ({
              total: t.available + t.reserved,
              reserved: t.reserved,
              available: t.available,
              validUntil: t.validUntil
            }))
          )
      })
    })
  ).pipe(Layer.provideMerge(LedgerStore.layer))
}
