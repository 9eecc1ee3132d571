/**
 * Measures any provider the same way: a decorator of the `Provider` port that times every
 * submission (sms_provider_submit_duration_seconds, by result) in the Clock's monotonic (real)
 * time, counts the submissions taken by the route that took them (sms_provider_accepted_total: a
 * provider ref starts with its route's name) and every verification query
 * (sms_provider_queries_total, by result).
 */
import { Effect, Layer, Metric } from "effect"
import { acceptedByRoute, providerQueries, submitDuration } from "../observability/Metrics.ts"
import { Provider, type QueryResult, type SubmitResult } from "./Provider.ts"

const nanosPerSecond = 1e9

/** Wraps a submit function so each call's latency is recorded under its result's tag. */
export const timedSubmit =
  <S, R extends { readonly _tag: SubmitResult["_tag"] }>(submit: (submission: S) => Effect.Effect<R>) =>
  (submission: S): Effect.Effect<R> =>
    Effect.clockWith((clock) => {
      // real elapsed time: under the test clock the service's time stands still while a provider answers
      const started = clock.monotonicTimeNanosUnsafe()
      return Effect.tap(submit(submission), (result) =>
        Metric.update(submitDuration[result._tag], Number(clock.monotonicTimeNanosUnsafe() - started) / nanosPerSecond)
      )
    })

const countQuery = (result: QueryResult) => Metric.update(providerQueries[result._tag], 1)

const countAccepted = (result: SubmitResult) =>
  result._tag === "Accepted"
    ? Metric.update(acceptedByRoute({ route: result.providerRef.slice(0, result.providerRef.indexOf(":")) }), 1)
    : Effect.void

/** The same provider, with its submissions timed and its queries counted. */
export const metered = (provider: typeof Provider.Service): typeof Provider.Service =>
  Provider.of({
    ...provider,
    submit: (submission) => Effect.tap(timedSubmit(provider.submit)(submission), countAccepted),
    query: (query) => Effect.tap(provider.query(query), countQuery)
  })

/** Decorates the Provider below it: `MeteredProvider.pipe(Layer.provide(adapterLayer))`. */
export const MeteredProvider: Layer.Layer<Provider, never, Provider> = Layer.effect(
  Provider,
  Effect.map(Effect.service(Provider), metered)
)
