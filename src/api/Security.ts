/** What a request carries once authenticated, and the middleware contracts that establish it. */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { Permission } from "../domain/Permissions.ts"
import {
  InternalError,
  InvalidApiKey,
  InvalidOrganisationHeader,
  ParseError,
  ServiceUnavailable,
  ValidationError
} from "../domain/Errors.ts"

/** The API key of the current request: its organisation scopes every query. */
export class CurrentKey extends Context.Service<
  CurrentKey,
  {
    readonly organisationId: string
    readonly keyId: string
    readonly permissions: ReadonlySet<Permission>
  }
>()("sms/CurrentKey") {}

/**
 * HTTP bearer authentication with an organisation API key. The scheme is written `bearer`, as
 * OpenAPI tools expect it (a capitalised one made the docs page offer Basic auth); the header's
 * scheme is matched without regard to case, so `Bearer` works as before.
 */
const bearerApiKey = HttpApiSecurity.http({ scheme: "bearer" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Format, "svc_sms_<key_id>.<secret>"),
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "An organisation API key: `Authorization: Bearer svc_sms_<key_id>.<secret>`"
  )
)

/** `Authorization: Bearer svc_sms_<key_id>.<secret>`; rejects `X-Organization`; 503 while the keys cannot be read. */
export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, { provides: CurrentKey }>()("sms/ApiKeyAuth", {
  security: { apiKey: bearerApiKey },
  error: [InvalidApiKey, InvalidOrganisationHeader, ServiceUnavailable]
}) {}

/** Turns request-decoding failures into `validation_error` / `parse_error` bodies. */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("sms/SchemaErrors", {
  error: [ValidationError, ParseError, InternalError]
}) {}
