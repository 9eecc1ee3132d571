/**
 * Counts what the two creation routes answer (sms_admissions_total), as a router middleware of
 * the public API: it sees every answer of those routes, whether the handler gave it (201/202, a
 * stored 502/503/403 replayed or not, a typed refusal) or the API layer did before the handler
 * ran (400 validation_error, 401, 403 insufficient_permissions, 413). A failure the edge turns
 * into 500 or 503 is counted as `5xx`; a request abandoned by its client is not counted.
 */
import { Cause, Effect, Exit } from "effect"
import { HttpRouter, HttpServerRespondable, type HttpServerResponse } from "effect/http"
import { HttpApi } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { type AdmissionRoute, countAdmission, countEscapedAdmission } from "../observability/Metrics.ts"

const admissionGroups: ReadonlyArray<string> = ["messages", "message-batches"] satisfies ReadonlyArray<AdmissionRoute>

/** Router path of each creation endpoint -> its route label, read from the API definition. */
const creationRoutes = (): ReadonlyMap<string, AdmissionRoute> => {
  const routes = new Map<string, AdmissionRoute>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) => {
      if (
        endpoint.identifier === "create" &&
        endpoint.method === "POST" &&
        admissionGroups.includes(group.identifier)
      ) {
        routes.set(endpoint.path, group.identifier as AdmissionRoute)
      }
    }
  })
  return routes
}

const routes = creationRoutes()

const record = (route: AdmissionRoute, exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) => {
  if (Exit.isSuccess(exit)) {
    return countAdmission(route, exit.value.status, exit.value.headers["idempotent-replayed"] === "true")
  }
  if (Cause.hasInterruptsOnly(exit.cause)) return Effect.void
  // a failure that knows its answer (413 for a body over the limit) is answered with that status
  const failure = Cause.squash(exit.cause)
  return HttpServerRespondable.isRespondable(failure)
    ? Effect.flatMap(HttpServerRespondable.toResponse(failure), (res) => countAdmission(route, res.status, false))
    : countEscapedAdmission(route)
}

/** Route middleware for the public API's routes; provide it to the public API layer. */
export const admissionMetricsLayer = HttpRouter.middleware((httpEffect) =>
  Effect.flatMap(Effect.service(HttpRouter.RouteContext), ({ route }) => {
    const admission = route.method === "POST" ? routes.get(route.path) : undefined
    return admission === undefined ? httpEffect : Effect.onExit(httpEffect, (exit) => record(admission, exit))
  })
).layer
