/**
 * At most `perSecond` events in any 1 s window, sliding: an event may happen when the
 * `perSecond`-th event before it is at least a second (plus a guard) old. The guard absorbs the
 * time between our write and the SMSC's read, so the SMSC never counts more than the cap in its
 * own window. O(1) per event: a ring of the last `perSecond` event times.
 */

/** Milliseconds added to the 1 s window so that delays on the way do not bunch events up at the SMSC. */
export const rateGuardMs = 100

/**
 * The share of a cap the service uses: an SMSC counts submissions when it reads them, and a
 * stalled SMSC (or a process of ours) reads a backlog as a burst; 100 ms of guard alone still let
 * the SMSC simulator count 104 in a second under a cap of 100 on a loaded machine. At 90 % of
 * the cap over 1.1 s, a burst would have to compress 230 ms of sends to reach the cap.
 */
export const rateHeadroom = 0.9

/** The events per (1 s + guard) the service allows itself under a cap of `cap` a second (0: no cap). */
export const usableRate = (cap: number): number => (cap === 0 ? 0 : Math.max(1, Math.floor(cap * rateHeadroom)))

export class SlidingRate {
  private readonly times: Array<number>
  private readonly perSecond: number
  private next = 0

  /** A cap of `perSecond` events (at least 1) in any 1 s window. */
  constructor(perSecond: number) {
    this.perSecond = perSecond
    this.times = new Array<number>(perSecond).fill(Number.NEGATIVE_INFINITY)
  }

  /** How long to wait from `now` (ms) before an event is allowed; 0 means it is allowed now. */
  waitMs(now: number): number {
    return Math.max(0, this.times[this.next]! + 1000 + rateGuardMs - now)
  }

  /** Records an event at `now` if it is allowed, and says whether it was. */
  tryTake(now: number): boolean {
    if (this.waitMs(now) > 0) return false
    this.times[this.next] = now
    this.next = (this.next + 1) % this.perSecond
    return true
  }
}
