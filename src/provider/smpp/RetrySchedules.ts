/**
 * The adapter's waits between attempts, as Schedules.
 *
 * Binding again after a loss or a failed attempt: the first retry `reconnectInitialMs` after the
 * loss, whatever the last bind lived, then doubling, each jittered by 0.8 to 1.2. While an outage
 * is young (its first `youngOutageMs`) the delay stays under four times the first one (2 s by
 * default), so that an SMSC restart costs seconds, not the doubling's tail; after, it grows up to
 * `reconnectMaxMs`. One schedule per outage: a bind starts the next outage's count afresh.
 *
 * Submitting again after a throttling answer (0x58, 0x14): `throttleInitialMs` doubling, jittered,
 * up to `throttleMaxMs`.
 */
import { Duration, Effect, Schedule } from "effect"
import type { SmppTiming } from "../../config/SmppSettings.ts"

/** How long an outage counts as young: the retries stay brisk. */
export const youngOutageMs = 30_000

/** The delays between bind attempts of one outage; its input is why the last attempt failed. */
export const reconnectSchedule = (timing: Pick<SmppTiming, "reconnectInitialMs" | "reconnectMaxMs">) =>
  Schedule.exponential(Duration.millis(timing.reconnectInitialMs)).pipe(
    Schedule.modifyDelay(({ duration, elapsed }) => {
      const cap =
        elapsed < youngOutageMs ? Math.min(timing.reconnectMaxMs, 4 * timing.reconnectInitialMs) : timing.reconnectMaxMs
      return Effect.succeed(Duration.millis(Math.min(Duration.toMillis(duration), cap)))
    }),
    Schedule.jittered,
    // the first retry comes exactly `reconnectInitialMs` after the loss
    Schedule.modifyDelay(({ attempt, duration }) =>
      Effect.succeed(attempt === 1 ? Duration.millis(timing.reconnectInitialMs) : duration)
    ),
    Schedule.setInputType<string>()
  )

/** The delays between submissions of a part the SMSC throttled. */
export const throttleSchedule = (timing: Pick<SmppTiming, "throttleInitialMs" | "throttleMaxMs">) =>
  Schedule.exponential(Duration.millis(timing.throttleInitialMs)).pipe(
    Schedule.modifyDelay(({ duration }) =>
      Effect.succeed(Duration.millis(Math.min(Duration.toMillis(duration), timing.throttleMaxMs)))
    ),
    Schedule.jittered,
    Schedule.setInputType<number>()
  )

/** A schedule's next delay in ms, driven by hand (each call is one more attempt of the same run). */
export const stepper = <I>(schedule: Schedule.Schedule<Duration.Duration, I>) =>
  Effect.map(
    Schedule.toStep(schedule),
    (step) => (nowMs: number, input: I) =>
      step(nowMs, input).pipe(
        Effect.map(([, delay]) => Duration.toMillis(delay)),
        // these schedules never end
        Effect.orDie
      )
  )
