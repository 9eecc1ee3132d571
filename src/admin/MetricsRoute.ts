/**
 * `GET /metrics`: every metric in the Prometheus text format (0.0.4), behind the operator token
 * (`Authorization: Bearer <SMS_ADMIN_TOKEN>`, checked exactly as the operator API checks it: a
 * missing or wrong token answers 401 `invalid_api_key` with the spec's error body).
 */
import { Effect, Layer, Schema } from "effect"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { PrometheusMetrics } from "effect/observability"
import { TableSizes } from "../db/TableSizes.ts"
import { CommonErrors } from "../domain/Errors.ts"
import { routesOf } from "../http/RouteTable.ts"
import { registerKnownSeries } from "../observability/Metrics.ts"
import { AdminAuth } from "./AdminApi.ts"
import { adminAuthLayer } from "./AdminHandlers.ts"
import { DatabaseGauges } from "./DatabaseGauges.ts"

/** The content type Prometheus expects of the text format. */
export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

/** The route's contract: one GET, the operator token's middleware, text in Prometheus' format. */
export class MetricsApi extends HttpApi.make("sms-metrics").add(
  HttpApiGroup.make("metrics")
    .add(
      HttpApiEndpoint.get("scrape", "/metrics", {
        success: Schema.String.pipe(HttpApiSchema.asText({ contentType: prometheusContentType })),
        error: CommonErrors
      })
    )
    .middleware(AdminAuth)
) {}

const MetricsHandlers = HttpApiBuilder.group(
  MetricsApi,
  "metrics",
  Effect.fn(function* (handlers) {
    const gauges = yield* DatabaseGauges
    yield* registerKnownSeries
    return handlers.handle("scrape", () => gauges.refresh.pipe(Effect.andThen(PrometheusMetrics.format())))
  })
)

/** The /metrics route; needs the AdminToken, the AppConfig and a SqlClient. */
export const metricsRouteLayer = HttpApiBuilder.layer(MetricsApi).pipe(
  Layer.provide(MetricsHandlers),
  Layer.provide([adminAuthLayer, DatabaseGauges.layer.pipe(Layer.provide(TableSizes.layer))])
)

/** The (method, path) pairs of the route, for the edge's 405 table. */
export const metricsPaths = routesOf(MetricsApi)
