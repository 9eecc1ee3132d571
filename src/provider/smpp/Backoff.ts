/** Capped exponential backoff with jitter, for reconnections and throttled submissions. */

/**
 * The delay before attempt `attempt` (0 for the first retry): `initialMs * 2^attempt` capped at
 * `maxMs`, then scaled by a factor from 0.5 to 1 taken from `random` (in [0, 1)), so that many
 * clients backing off together spread out.
 */
export const backoffMs = (attempt: number, initialMs: number, maxMs: number, random: number): number =>
  Math.round(Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30)) * (0.5 + random / 2))
