/**
 * The service's clock (docs/decisions.md#the-test-clock). `system`: Effect's own clock. `test`: a clock that
 * starts at the real time and then moves only when the operator advances it, like a payment
 * provider's test clock; every time the service judges (send_at, today for credit expiry,
 * receipt and verification delays, leases) reads it. Sleeps stay in real time under both: a
 * sleep is a pause of the process (a retry backoff, a provider's latency), not a time the
 * service judges.
 */
import { Clock, Context, type Duration, Effect, Layer } from "effect"

export type ClockMode = "system" | "test"

export class ServiceClock extends Context.Service<
  ServiceClock,
  {
    readonly mode: ClockMode
    /** Test mode: moves the clock forward to `ms` (an earlier or non-finite `ms` changes nothing). A no-op for the system clock. */
    readonly set: (ms: number) => Effect.Effect<void>
  }
>()("sms/ServiceClock") {}

const nanosPerMilli = 1_000_000n

/** A clock that reads `ms` and sleeps with the real clock. */
class ManualClock implements Clock.Clock {
  private readonly real = Clock.Clock.defaultValue()
  ms: number
  constructor(ms: number) {
    this.ms = ms
  }
  currentTimeMillisUnsafe(): number {
    return this.ms
  }
  readonly currentTimeMillis: Effect.Effect<number> = Effect.sync(() => this.ms)
  currentTimeNanosUnsafe(): bigint {
    return BigInt(this.ms) * nanosPerMilli
  }
  readonly currentTimeNanos: Effect.Effect<bigint> = Effect.sync(() => this.currentTimeNanosUnsafe())
  monotonicTimeNanosUnsafe(): bigint {
    return this.real.monotonicTimeNanosUnsafe()
  }
  readonly monotonicTimeNanos: Effect.Effect<bigint> = Effect.sync(() => this.monotonicTimeNanosUnsafe())
  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return this.real.sleep(duration)
  }
}

/** Effect's Clock and the ServiceClock for `mode`; a test clock starts at the real time. */
export const clockLayer = (mode: ClockMode): Layer.Layer<ServiceClock> => {
  if (mode === "system") return Layer.succeed(ServiceClock, ServiceClock.of({ mode, set: () => Effect.void }))
  const clock = new ManualClock(Date.now())
  return Layer.merge(
    Layer.succeed(
      ServiceClock,
      ServiceClock.of({
        mode,
        set: (ms) =>
          Effect.sync(() => {
            if (Number.isFinite(ms)) clock.ms = Math.max(clock.ms, ms)
          })
      })
    ),
    Layer.succeed(Clock.Clock, clock)
  )
}
