/**
 * The public API described: its OpenAPI document as JSON and a page that renders it, both built
 * from the HttpApi declaration (src/api/Api.ts), so they never drift from what the routes do.
 */
import { Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiScalar, OpenApi } from "effect/http-api"
import { Api, apiPrefix } from "../api/Api.ts"

/** The OpenAPI document (JSON). */
export const openApiPath = `${apiPrefix}/openapi.json`

/** The docs page (HTML, whatever the request's Accept). */
export const docsPagePath = `${apiPrefix}/docs`

export const docsPaths: ReadonlyArray<readonly [method: string, path: string]> = [
  ["GET", openApiPath],
  ["GET", docsPagePath]
]

export const DocsRoutes = Layer.mergeAll(
  HttpRouter.add("GET", openApiPath, HttpServerResponse.jsonUnsafe(OpenApi.fromApi(Api))),
  HttpApiScalar.layer(Api, { path: docsPagePath, scalar: { withDefaultFonts: false } })
)
