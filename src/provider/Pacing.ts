/**
 * The turns of dispatched messages on one route, evenly spaced at its rate (GCRA): what every
 * route with an `mps` (SMPP's Route.ts, OneAPI's OneApiRoute.ts) makes its dispatched messages
 * wait for (`Provider.pace`). A sleep that overslept is caught up by the next turns, in bursts no
 * longer than the tolerance.
 */
import { type Clock, Effect, Semaphore } from "effect"

/** How early a dispatched message's turn may come (GCRA tolerance). */
export const paceToleranceMs = 100

export class Pacer {
  private nextTurnMs = 0
  /** One waiter at a time. */
  private readonly turns = Semaphore.makeUnsafe(1)
  private readonly clock: Clock.Clock
  private readonly spacingMs: number

  /** Turns `spacingMs` apart; 0 never waits. */
  constructor(clock: Clock.Clock, spacingMs: number) {
    this.clock = clock
    this.spacingMs = spacingMs
  }

  /** Waits for the next turn. */
  get pace(): Effect.Effect<void> {
    if (this.spacingMs === 0) return Effect.void
    const self = this
    return Effect.gen(function* () {
      const nowMs = self.clock.currentTimeMillisUnsafe()
      const theoreticalMs = Math.max(nowMs, self.nextTurnMs)
      self.nextTurnMs = theoreticalMs + self.spacingMs
      const turnMs = theoreticalMs - paceToleranceMs
      if (turnMs > nowMs) yield* Effect.sleep(turnMs - nowMs)
    }).pipe(self.turns.withPermits(1))
  }
}
