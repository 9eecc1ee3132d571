/**
 * Every route of the service and the JSON edge: the public API, the operator API, the OpenAPI
 * document and docs page, the simulator console, health routes and /metrics, over the services
 * they need.
 */
import { Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../admin/AdminApi.ts"
import { AdmissionMetricsLive } from "../http/AdmissionMetrics.ts"
import { MetricsRouteLive, metricsPaths } from "../admin/MetricsRoute.ts"
import { AdminAuthLive, AdminHandlers } from "../admin/AdminHandlers.ts"
import { ActivityHandlers } from "../admin/ActivityHandlers.ts"
import { ClockHandlers } from "../admin/ClockHandlers.ts"
import { WebhookAdminHandlers } from "../admin/WebhookAdminHandlers.ts"
import { SimulatorHandlers } from "../admin/SimulatorHandlers.ts"
import { Api } from "../api/Api.ts"
import { ConsoleRoutes, consolePaths } from "../console/ConsoleRoutes.ts"
import { ApiKeyAuthLive } from "../http/ApiKeyAuthLive.ts"
import { DocsRoutes, docsPagePath, docsPaths } from "../http/ApiDocs.ts"
import { BalanceHandlers } from "../http/BalanceHandlers.ts"
import { BatchesHandlers } from "../http/BatchesHandlers.ts"
import { ContactsHandlers } from "../http/ContactsHandlers.ts"
import { makeEdge } from "../http/Edge.ts"
import { MessagesHandlers } from "../http/MessagesHandlers.ts"
import { WebhooksHandlers } from "../http/WebhooksHandlers.ts"
import { HealthRoutes, healthPaths } from "../http/Health.ts"
import { routesOf, routeTable } from "../http/Routes.ts"
import { SchemaErrorsLive } from "../http/SchemaErrorsLive.ts"

const PublicRoutes = HttpApiBuilder.layer(Api).pipe(
  Layer.provide([BalanceHandlers, ContactsHandlers, MessagesHandlers, BatchesHandlers, WebhooksHandlers]),
  Layer.provide([ApiKeyAuthLive, SchemaErrorsLive, AdmissionMetricsLive])
)

const AdminRoutes = HttpApiBuilder.layer(AdminApi).pipe(
  Layer.provide([AdminHandlers, ActivityHandlers, SimulatorHandlers, ClockHandlers, WebhookAdminHandlers]),
  Layer.provide([AdminAuthLive, SchemaErrorsLive])
)

/** Every (method, path) the service answers: the APIs' endpoints, then its plain routes. */
export const declaredRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ...routesOf(Api),
  ...routesOf(AdminApi),
  ...healthPaths,
  ...metricsPaths,
  ...consolePaths,
  ...docsPaths
]

/** Every route the service answers, for the edge and the Node server. */
export const routes = routeTable(declaredRoutes)

/** Paths that answer a page, a file or text rather than JSON, whatever the request's Accept. */
const pagePaths = new Set([docsPagePath, ...consolePaths.map(([, path]) => path), ...metricsPaths.map(([, path]) => path)])

/** Every route and the edge middleware; needs ServicesLive's services, the AdminToken and a SqlClient. */
export const HttpAppLive = Layer.mergeAll(
  PublicRoutes,
  AdminRoutes,
  DocsRoutes,
  ConsoleRoutes,
  HealthRoutes,
  MetricsRouteLive,
  makeEdge(routes, pagePaths)
)
