/**
 * A pure, in-memory reference model of the credit ledger (docs/decisions.md#credits), written from the
 * contract alone: it does not import src/domain/Credits.ts nor src/ledger/Ledger.ts.
 *
 * Allocation is modelled differently from the implementation on purpose: the free credits of the
 * valid lots, laid end to end in drawing order (earliest valid_until first, never-expiring last,
 * equal valid_until in grant order), form one line of credit units; the batch's messages occupy
 * consecutive ranges of that line, and a message's hold on a lot is the overlap of their ranges.
 */

/** A lot: one grant. `seq` is its grant order within the organisation (0, 1, ...). */
export interface ModelLot {
  readonly seq: number
  readonly amount: number
  /** Inclusive UTC day `YYYY-MM-DD`, or null (never expires). */
  readonly validUntil: string | null
  reserved: number
  consumed: number
}

/** The part of one message's reservation drawn from one lot. */
export interface ModelHold {
  readonly messageId: string
  readonly lotSeq: number
  readonly amount: number
  state: "pending" | "posted" | "voided"
}

export interface ModelBalance {
  readonly total: number
  readonly reserved: number
  readonly available: number
  readonly validUntil: string | null
}

export interface ModelTotals {
  readonly granted: number
  readonly consumed: number
  readonly reserved: number
  readonly available: number
  readonly expiredUnreserved: number
}

export interface ModelReservation {
  readonly messageId: string
  readonly credits: number
}

const dayMillis = 86_400_000

/** The UTC day of an instant, `YYYY-MM-DD`. */
export const dayOf = (millis: number): string => {
  const d = new Date(millis)
  const pad = (n: number, w: number) => String(n).padStart(w, "0")
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`
}

/** The day `n` days after `day` (both `YYYY-MM-DD`, UTC). */
export const addDays = (day: string, n: number): string => {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number]
  return dayOf(Date.UTC(y, m - 1, d) + n * dayMillis)
}

/** The first instant of the UTC day after the one holding `millis`. */
export const nextMidnight = (millis: number): number => (Math.floor(millis / dayMillis) + 1) * dayMillis

/** A deterministic message id (a UUID) from a counter; `unknown` ids are never reserved. */
export const messageUuid = (n: number, unknown = false): string =>
  `${unknown ? "ffffffff" : "00000000"}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

export class LedgerModel {
  nowMillis: number
  readonly lots: Array<ModelLot> = []
  readonly holds: Array<ModelHold> = []
  /** Every message id ever reserved successfully, in order (settled ones stay listed). */
  readonly reservedIds: Array<string> = []
  private nextMessage = 1
  private nextUnknown = 1

  constructor(nowMillis: number) {
    this.nowMillis = nowMillis
  }

  get today(): string {
    return dayOf(this.nowMillis)
  }

  freshMessageId(): string {
    return messageUuid(this.nextMessage++)
  }

  unknownMessageId(): string {
    return messageUuid(this.nextUnknown++, true)
  }

  /** Valid today: valid_until is inclusive, so a lot expires at the start of the next UTC day. */
  isValid(lot: ModelLot): boolean {
    return lot.validUntil === null || lot.validUntil >= this.today
  }

  free(lot: ModelLot): number {
    return lot.amount - lot.reserved - lot.consumed
  }

  grant(amount: number, validUntil: string | null): void {
    this.lots.push({ seq: this.lots.length, amount, validUntil, reserved: 0, consumed: 0 })
  }

  /** The valid lots with free credits, in drawing order. */
  drawingOrder(): Array<ModelLot> {
    const rank = (l: ModelLot) => (l.validUntil === null ? "9999-99-99" : l.validUntil)
    return this.lots
      .filter((l) => this.isValid(l) && this.free(l) > 0)
      .sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : a.seq - b.seq))
  }

  /** Whether the batch can be funded from valid lots right now. */
  canFund(reservations: ReadonlyArray<ModelReservation>): boolean {
    const needed = reservations.reduce((s, r) => s + r.credits, 0)
    const free = this.drawingOrder().reduce((s, l) => s + this.free(l), 0)
    return needed <= free
  }

  /** Reserves the whole batch, or nothing: returns false (and changes nothing) when it cannot be funded. */
  reserve(reservations: ReadonlyArray<ModelReservation>): boolean {
    if (!this.canFund(reservations)) return false
    // Lay the lots' free credits end to end: lot i covers units [lotStart[i], lotStart[i] + free[i]).
    const order = this.drawingOrder()
    const lotRanges: Array<{ lot: ModelLot; start: number; end: number }> = []
    let at = 0
    for (const lot of order) {
      lotRanges.push({ lot, start: at, end: at + this.free(lot) })
      at += this.free(lot)
    }
    // Messages take consecutive ranges from unit 0; the holds are the overlaps.
    const newHolds: Array<ModelHold> = []
    let cursor = 0
    for (const r of reservations) {
      const [start, end] = [cursor, cursor + r.credits]
      cursor = end
      for (const range of lotRanges) {
        const overlap = Math.min(end, range.end) - Math.max(start, range.start)
        if (overlap > 0)
          newHolds.push({ messageId: r.messageId, lotSeq: range.lot.seq, amount: overlap, state: "pending" })
      }
    }
    for (const h of newHolds) this.lots[h.lotSeq]!.reserved += h.amount
    this.holds.push(...newHolds)
    for (const r of reservations) if (!this.reservedIds.includes(r.messageId)) this.reservedIds.push(r.messageId)
    return true
  }

  private settle(messageId: string, to: "posted" | "voided"): void {
    for (const h of this.holds) {
      if (h.messageId !== messageId || h.state !== "pending") continue
      const lot = this.lots[h.lotSeq]!
      lot.reserved -= h.amount
      if (to === "posted") lot.consumed += h.amount
      h.state = to
    }
  }

  /** Spends a message's pending reservation; a no-op when nothing is pending. */
  consume(messageId: string): void {
    this.settle(messageId, "posted")
  }

  /** Returns a message's pending reservation to its lots (even expired ones); a no-op when nothing is pending. */
  release(messageId: string): void {
    this.settle(messageId, "voided")
  }

  totals(): ModelTotals {
    const sum = (f: (l: ModelLot) => number, where: (l: ModelLot) => boolean = () => true) =>
      this.lots.filter(where).reduce((s, l) => s + f(l), 0)
    return {
      granted: sum((l) => l.amount),
      consumed: sum((l) => l.consumed),
      reserved: sum((l) => l.reserved),
      available: sum(
        (l) => this.free(l),
        (l) => this.isValid(l)
      ),
      expiredUnreserved: sum(
        (l) => this.free(l),
        (l) => !this.isValid(l)
      )
    }
  }

  balance(): ModelBalance {
    const t = this.totals()
    const expiring = this.lots
      .filter((l) => this.isValid(l) && this.free(l) > 0 && l.validUntil !== null)
      .map((l) => l.validUntil!)
      .sort()
    return {
      total: t.available + t.reserved,
      reserved: t.reserved,
      available: t.available,
      validUntil: expiring[0] ?? null
    }
  }
}
