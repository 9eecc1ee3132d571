/**
 * The metered Provider decorator over a fake adapter, under a TestClock and a registry of its
 * own: each submission's latency lands in its result's histogram at the Clock's elapsed time, each
 * query is counted by result, and the answers pass through unchanged.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Metric } from "effect"
import { TestClock } from "effect/testing"
import { providerQueries, submitDuration } from "../../src/observability/Metrics.ts"
import { MeteredProvider } from "../../src/provider/Metered.ts"
import { Provider, type QueryResult, type SubmitResult, type Submission } from "../../src/provider/Provider.ts"
import { scriptedProvider } from "./ScriptedProvider.ts"

const submission = (to: string): Submission => ({
  organisationId: "org",
  messageId: `m-${to}`,
  to,
  senderName: "DEMO",
  text: "Salama",
  segments: 1
})

/** Answers after 250 ms: accepted, except +261340000003 (rejected). Queries: never received. */
const FakeAdapter = Layer.succeed(
  Provider,
  scriptedProvider(
    (s) =>
      Effect.sleep("250 millis").pipe(
        Effect.as<SubmitResult>(
          s.to === "+261340000003"
            ? { _tag: "Rejected", reason: "test" }
            : { _tag: "Accepted", providerRef: `sim:${s.messageId}` }
        )
      ),
    () => Effect.succeed<QueryResult>({ _tag: "NotReceived", reason: "test" }),
    1000
  )
)

const bucket = (state: Metric.HistogramState, le: number) => state.buckets.find(([bound]) => bound === le)?.[1]

describe("MeteredProvider", () => {
  it.effect("times each submission with the Clock and counts each query, by result", () =>
    Effect.gen(function* () {
      const provider = yield* Provider
      const accepted = yield* Effect.forkChild(provider.submit(submission("+261340000001")))
      const rejected = yield* Effect.forkChild(provider.submit(submission("+261340000003")))
      yield* TestClock.adjust("250 millis")
      expect((yield* Fiber.join(accepted))._tag).toBe("Accepted")
      expect((yield* Fiber.join(rejected))._tag).toBe("Rejected")
      expect(yield* provider.query({ ...submission("+261340000009"), providerRef: null })).toEqual({
        _tag: "NotReceived",
        reason: "test"
      })

      const latency = yield* Metric.value(submitDuration.Accepted)
      expect([latency.count, latency.sum]).toEqual([1, 0.25])
      expect([bucket(latency, 0.1), bucket(latency, 0.25), bucket(latency, 30)]).toEqual([0, 1, 1])
      expect((yield* Metric.value(submitDuration.Rejected)).count).toBe(1)
      expect((yield* Metric.value(submitDuration.Unknown)).count).toBe(0)
      expect((yield* Metric.value(providerQueries.NotReceived)).count).toBe(1)
      expect((yield* Metric.value(providerQueries.Accepted)).count).toBe(0)
    }).pipe(
      Effect.provide(MeteredProvider.pipe(Layer.provide(FakeAdapter))),
      Effect.provideService(Metric.MetricRegistry, new Map())
    )
  )
})
