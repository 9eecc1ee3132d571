/**
 * Every route of the service and the JSON edge: `GET /` (where everything is), the public API,
 * the operator API, the OpenAPI document and docs page, the simulator console, health routes,
 * the OneAPI providers' notify routes and /metrics, over the services they need.
 */
import { Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../admin/AdminApi.ts"
import { admissionMetricsLayer } from "../http/AdmissionMetrics.ts"
import { metricsRouteLayer, metricsPaths } from "../admin/MetricsRoute.ts"
import { adminAuthLayer, AdminHandlers } from "../admin/AdminHandlers.ts"
import { ActivityHandlers } from "../admin/ActivityHandlers.ts"
import { ClockHandlers } from "../admin/ClockHandlers.ts"
import { WebhookAdminHandlers } from "../admin/WebhookAdminHandlers.ts"
import { SimulatorHandlers } from "../admin/SimulatorHandlers.ts"
import { InboundAdminHandlers } from "../admin/InboundAdminHandlers.ts"
import { Api, apiPrefix } from "../api/Api.ts"
import { consolePagePath, ConsoleRoutes, consolePaths } from "../console/ConsoleRoutes.ts"
import { apiKeyAuthLayer } from "../http/ApiKeyAuth.ts"
import { DocsRoutes, docsPagePath, docsPaths, openApiPath } from "../http/ApiDocs.ts"
import { BalanceHandlers } from "../http/BalanceHandlers.ts"
import { BatchesHandlers } from "../http/BatchesHandlers.ts"
import { ContactsHandlers } from "../http/ContactsHandlers.ts"
import { makeEdge } from "../http/Edge.ts"
import { MessagesHandlers } from "../http/MessagesHandlers.ts"
import { WebhooksHandlers } from "../http/WebhooksHandlers.ts"
import { InboundHandlers } from "../http/InboundHandlers.ts"
import { OptOutsHandlers } from "../http/OptOutsHandlers.ts"
import { HealthRoutes, healthPaths } from "../http/Health.ts"
import { notifyPaths } from "../http/NotifyPaths.ts"
import { ProviderNotificationRoutes } from "../http/ProviderNotifications.ts"
import { routesOf, routeTable } from "../http/RouteTable.ts"
import { schemaErrorsLayer } from "../http/SchemaErrors.ts"

const PublicRoutes = HttpApiBuilder.layer(Api).pipe(
  Layer.provide([
    BalanceHandlers,
    ContactsHandlers,
    MessagesHandlers,
    BatchesHandlers,
    WebhooksHandlers,
    InboundHandlers,
    OptOutsHandlers
  ]),
  Layer.provide([apiKeyAuthLayer, schemaErrorsLayer, admissionMetricsLayer])
)

const AdminRoutes = HttpApiBuilder.layer(AdminApi).pipe(
  Layer.provide([
    AdminHandlers,
    ActivityHandlers,
    SimulatorHandlers,
    ClockHandlers,
    WebhookAdminHandlers,
    InboundAdminHandlers
  ]),
  Layer.provide([adminAuthLayer, schemaErrorsLayer])
)

/** `GET /`: what the service is and where to read about it (JSON, like every answer but the pages). */
const indexPaths: ReadonlyArray<readonly [method: string, path: string]> = [["GET", "/"]]
const IndexRoute = HttpRouter.add(
  "GET",
  "/",
  HttpServerResponse.jsonUnsafe({
    service: "sms-service",
    api: `${apiPrefix}/`,
    docs: docsPagePath,
    openapi: openApiPath,
    console: consolePagePath,
    health: "/health"
  })
)

/** Every (method, path) the service answers: the APIs' endpoints, then its plain routes. */
export const declaredRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ...routesOf(Api),
  ...routesOf(AdminApi),
  ...indexPaths,
  ...healthPaths,
  ...notifyPaths,
  ...metricsPaths,
  ...consolePaths,
  ...docsPaths
]

/** Every route the service answers, for the edge and the Node server. */
export const routes = routeTable(declaredRoutes)

/** Paths that answer a page, a file or text rather than JSON, whatever the request's Accept. */
const pagePaths = new Set([
  docsPagePath,
  ...consolePaths.map(([, path]) => path),
  ...metricsPaths.map(([, path]) => path)
])

/** Every route and the edge middleware; needs the services of AppLayer.ts (servicesWith), the AdminToken and a SqlClient. */
export const httpAppLayer = Layer.mergeAll(
  PublicRoutes,
  AdminRoutes,
  IndexRoute,
  DocsRoutes,
  ConsoleRoutes,
  HealthRoutes,
  ProviderNotificationRoutes,
  metricsRouteLayer,
  makeEdge(routes, pagePaths)
)
