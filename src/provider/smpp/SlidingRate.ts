/**
 * At most `perSecond` events in any 1 s window, sliding: an event may happen when the
 * `perSecond`-th event before it is at least a second old (`slidingWindowMs`). O(1) per event: a
 * ring of the last `perSecond` event times. With the window of capSplit, this keeps an SMSC's own
 * count under the cap.
 */

/** The part of a capped route's rate kept for submissions awaiting their answer (capSplit). */
export const inFlightShare = 0.05

/** How a capped route divides its cap between submissions awaiting their answer and new writes. */
export interface CapSplit {
  /** Most `submit_sm` awaiting their answer: the route's window, under the cap. */
  readonly inFlight: number
  /** Most `submit_sm` written in any 1 s. */
  readonly perSecond: number
}

/**
 * How a route holds a cap of `cap` `submit_sm` a second as the SMSC counts them (when it reads
 * them), with a window of `window`. What an SMSC reads in one of its seconds was either written
 * in that second (at most `perSecond`) or written before it and still unread when it began, so
 * awaiting its answer (at most `inFlight`): never more than `inFlight + perSecond = cap`, however
 * long the SMSC or this process stall, as long as answers come within the response deadline (a
 * submission past its deadline frees its place in the window). 5 % of the cap (at least 1, at most
 * the window) awaits answers, the rest is the rate: 190 a second under a cap of 200. A cap of 1
 * cannot be split (1 and 1). Without a cap (0) there is nothing to split.
 */
export const capSplit = (cap: number, window: number): CapSplit => {
  const inFlight = Math.min(window, Math.max(1, Math.floor(cap * inFlightShare)))
  return { inFlight, perSecond: Math.max(1, cap - inFlight) }
}

/**
 * The span an event's window lasts, in the whole milliseconds of the Clock: a second, and 2 ms
 * more. Two times read 1000 whole milliseconds apart may be up to 1 ms less apart in fact, and the
 * wall clock the Clock reads may be slewed by up to 0.05 % (0.5 ms a second); the SMSC counts its
 * seconds in real time. Without the 2 ms, an SMSC once counted 5 under a cap of 4.
 */
export const slidingWindowMs = 1002

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
    return Math.max(0, this.times[this.next]! + slidingWindowMs - now)
  }

  /** Records an event at `now` if it is allowed, and says whether it was. */
  tryTake(now: number): boolean {
    if (this.waitMs(now) > 0) return false
    this.times[this.next] = now
    this.next = (this.next + 1) % this.perSecond
    return true
  }
}
