/**
 * OpenTelemetry traces over OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set: every
 * `Effect.fn` span and the HTTP server spans go to `<endpoint>/v1/traces`. Unset, nothing is
 * installed and Effect keeps its built-in tracer, which exports nothing.
 *
 * Exporting never holds a request: ended spans go into a buffer that is posted in the
 * background every `exportIntervalMs` or as soon as it holds `exportBatchSpansMax` spans. It is
 * bounded: each post gives up after `exportTimeoutMs`, at most `exportsInFlightMax` posts run at
 * once (a batch beyond is dropped), and after a failed post (retried 3 times) the exporter drops
 * spans for 60 s. So a slow or absent collector costs at most a few batches of memory.
 */
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientError, type HttpClientRequest } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import type { AppConfigShape } from "../config/Config.ts"

/** How often buffered spans are posted. */
export const exportIntervalMs = 5000
/** A buffer this full is posted at once. */
export const exportBatchSpansMax = 512
/** Longest one post to the collector may take. */
export const exportTimeoutMs = 10_000
/** Most posts to the collector running at once. */
export const exportsInFlightMax = 2
/** Longest shutdown waits for the last spans to be posted. */
export const exportShutdownMs = 3000

const refused = (request: HttpClientRequest.HttpClientRequest, description: string) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description }) })

/** The fetch client, with each request bounded in time and in number. */
const BoundedFetchClient = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(Effect.service(HttpClient.HttpClient), (client) => {
    let inFlight = 0
    return HttpClient.transform(client, (response, request) => {
      if (inFlight >= exportsInFlightMax) return Effect.fail(refused(request, "too many exports in flight"))
      inFlight++
      return response.pipe(
        Effect.timeoutOrElse({
          duration: exportTimeoutMs,
          orElse: () => Effect.fail(refused(request, `no answer within ${exportTimeoutMs} ms`))
        }),
        Effect.ensuring(Effect.sync(() => inFlight--))
      )
    })
  })
).pipe(Layer.provide(FetchHttpClient.layer))

/** `<endpoint>/v1/traces`, the OTLP/HTTP traces path under the collector's base URL (decoded without trailing slash). */
export const tracesUrl = (endpoint: string) => `${endpoint}/v1/traces`

/** The tracer of the configuration: OTLP export when an endpoint is set, else nothing. */
export const tracingLayer = (config: Pick<AppConfigShape, "otlpEndpoint" | "otelServiceName">) =>
  config.otlpEndpoint === undefined
    ? Layer.empty
    : OtlpTracer.layer({
        url: tracesUrl(config.otlpEndpoint),
        resource: { serviceName: config.otelServiceName },
        exportInterval: exportIntervalMs,
        maxBatchSize: exportBatchSpansMax,
        shutdownTimeout: exportShutdownMs
      }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(BoundedFetchClient))
