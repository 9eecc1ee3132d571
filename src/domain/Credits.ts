/** Lot arithmetic of the credit ledger: which lots fund which reservation. Pure, no I/O. */

/** A valid lot and the credits it has free, in drawing order (earliest expiry first). */
export interface LotFree {
  readonly id: string
  readonly free: number
}

/** The part of one message's reservation drawn from one lot. */
export interface Hold {
  readonly messageId: string
  readonly lotId: string
  readonly amount: number
}

/**
 * Draws each reservation, in order, from the lots in their given order; a reservation may span
 * lots. Returns undefined when the lots cannot fund them all (the caller then reserves nothing).
 */
export const allocate = (
  lots: ReadonlyArray<LotFree>,
  reservations: ReadonlyArray<{ readonly messageId: string; readonly credits: number }>
): ReadonlyArray<Hold> | undefined => {
  const free = lots.map((l) => l.free)
  const holds: Array<Hold> = []
  let lot = 0
  for (const r of reservations) {
    let left = r.credits
    while (left > 0) {
      while (
        // Stryker disable next-line ConditionalExpression,EqualityOperator: free[lots.length] is undefined, never 0: the loop stops at the end without the bound
        lot < lots.length &&
        free[lot]! === 0
      )
        lot++
      if (lot === lots.length) return undefined
      const take = Math.min(left, free[lot]!)
      free[lot] = free[lot]! - take
      left -= take
      const last = holds[holds.length - 1]
      if (last !== undefined && last.messageId === r.messageId && last.lotId === lots[lot]!.id) {
        holds[holds.length - 1] = { ...last, amount: last.amount + take }
      } else {
        holds.push({ messageId: r.messageId, lotId: lots[lot]!.id, amount: take })
      }
    }
  }
  return holds
}

/** The most lots one grant is split into. */
export const lotsPerGrantMax = 32

/** The fewest credits a lot split from a grant holds. */
export const creditsPerSplitLotMin = 64

/**
 * The amounts of the lots one grant is stored as. Concurrent admissions each lock the lot they
 * reserve from until they commit; a large grant split into up to `lotsPerGrantMax` lots of one
 * validity lets as many admissions reserve at once instead of queueing on one row. Each lot holds
 * at least `creditsPerSplitLotMin` credits (a grant below twice that stays one lot), the amounts
 * differ by at most one credit and add up to the grant.
 */
export const splitGrant = (amount: number): ReadonlyArray<number> => {
  const lots = Math.max(1, Math.min(lotsPerGrantMax, Math.floor(amount / creditsPerSplitLotMin)))
  const base = Math.floor(amount / lots)
  const rest = amount - base * lots
  return Array.from({ length: lots }, (_, i) => base + (i < rest ? 1 : 0))
}
