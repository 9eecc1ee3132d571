/**
 * Assembles the HTTP application: the public API, the operator API, the OpenAPI document and
 * docs page, the simulator console, health routes, /metrics and the JSON edge, over the services
 * they need.
 */
import { Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiScalar, OpenApi } from "effect/http-api"
import { AdminApi } from "../admin/AdminApi.ts"
import { AdmissionMetricsLive } from "./AdmissionMetrics.ts"
import { MetricsRouteLive, metricsPaths } from "./MetricsRoute.ts"
import { AdminAuthLive, AdminHandlers } from "../admin/AdminHandlers.ts"
import { ActivityHandlers } from "../admin/ActivityHandlers.ts"
import { ClockHandlers } from "../admin/ClockHandlers.ts"
import { SimulatorHandlers } from "../admin/SimulatorHandlers.ts"
import { Api } from "../api/Api.ts"
import { ConsoleRoutes, consolePaths } from "../console/ConsoleRoutes.ts"
import { ApiKeyAuthLive } from "./ApiKeyAuthLive.ts"
import { BalanceHandlers } from "./BalanceHandlers.ts"
import { BatchesHandlers } from "./BatchesHandlers.ts"
import { ContactsHandlers } from "./ContactsHandlers.ts"
import { makeEdge } from "./Edge.ts"
import { MessagesHandlers } from "./MessagesHandlers.ts"
import { HealthRoutes, healthPaths } from "./Health.ts"
import { routesOf, routeTable } from "./Routes.ts"
import { SchemaErrorsLive } from "./SchemaErrorsLive.ts"

const openApiPath = "/api/sms/v2/openapi.json"
const docsPath = "/api/sms/v2/docs"
const openApiDocument = OpenApi.fromApi(Api)

const PublicRoutes = HttpApiBuilder.layer(Api).pipe(
  Layer.provide([BalanceHandlers, ContactsHandlers, MessagesHandlers, BatchesHandlers]),
  Layer.provide([ApiKeyAuthLive, SchemaErrorsLive, AdmissionMetricsLive])
)

const AdminRoutes = HttpApiBuilder.layer(AdminApi).pipe(
  Layer.provide([AdminHandlers, ActivityHandlers, SimulatorHandlers, ClockHandlers]),
  Layer.provide([AdminAuthLive, SchemaErrorsLive])
)

const DocsRoutes = Layer.mergeAll(
  HttpRouter.add("GET", openApiPath, HttpServerResponse.jsonUnsafe(openApiDocument)),
  HttpApiScalar.layer(Api, { path: docsPath, scalar: { withDefaultFonts: false } })
)

/** Every (method, path) the service answers: the APIs' endpoints, then its plain routes. */
export const declaredRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ...routesOf(Api),
  ...routesOf(AdminApi),
  ...healthPaths,
  ...metricsPaths,
  ...consolePaths,
  ["GET", openApiPath],
  ["GET", docsPath]
]

/** Every route the service answers, for the edge and the Node server. */
export const routes = routeTable(declaredRoutes)

/** Paths that answer a page, a file or text rather than JSON, whatever the request's Accept. */
const pagePaths = new Set([docsPath, ...consolePaths.map(([, path]) => path), ...metricsPaths.map(([, path]) => path)])

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
