/**
 * Logging what recurs without flooding the logs. An outage (the database unreachable, an inbox
 * that cannot store) is news when it starts and when it ends: one WARN, DEBUG while it lasts,
 * one INFO once things work again. A peer's misbehaviour (an SMSC sending PDUs it should not) is
 * logged at WARN at most once per interval per kind, with how many more came meanwhile.
 */
import { Clock, Effect } from "effect"

export interface OutageLog {
  /** One more failure: WARN when it starts an outage, DEBUG while one lasts. */
  readonly failed: (message: string, cause?: unknown) => Effect.Effect<void>
  /** Success: INFO `recovered` when it ends an outage, nothing otherwise. */
  readonly succeeded: (recovered: string) => Effect.Effect<void>
  /** Whether an outage is under way. */
  readonly down: () => boolean
}

/** The log of one thing that can fail over and over (a loop, a group commit, an inbox). */
export const makeOutageLog = (): OutageLog => {
  let down = false
  return {
    failed: (message, cause) =>
      Effect.suspend(() => {
        const starts = !down
        down = true
        const log = starts ? Effect.logWarning : Effect.logDebug
        return cause === undefined ? log(message) : log(message, cause)
      }),
    succeeded: (recovered) =>
      Effect.suspend(() => {
        if (!down) return Effect.void
        down = false
        return Effect.logInfo(recovered)
      }),
    down: () => down
  }
}

/** Logs `message` at WARN at most once per `intervalMs` per `kind`, saying how many were not logged since. */
export const makeThrottledLog = (intervalMs: number) => {
  const last = new Map<string, { atMs: number; skipped: number }>()
  return (kind: string, message: string, annotations: Readonly<Record<string, unknown>> = {}): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
      const seen = last.get(kind)
      if (seen !== undefined && nowMs - seen.atMs < intervalMs) {
        seen.skipped++
        return Effect.logDebug(message).pipe(Effect.annotateLogs(annotations))
      }
      last.set(kind, { atMs: nowMs, skipped: 0 })
      const more = seen === undefined || seen.skipped === 0 ? {} : { more_since_last: seen.skipped }
      return Effect.logWarning(message).pipe(Effect.annotateLogs({ ...annotations, ...more }))
    })
}
