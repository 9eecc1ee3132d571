/** The operator API (contract section 2) under /admin/v1: the contract only, no implementation. */
import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Balance, Message } from "../api/Schemas.ts"
import { SchemaErrors } from "../api/Security.ts"
import { CalendarDate } from "../domain/Dates.ts"
import { CommonErrors, ErasureNotAllowed, InvalidApiKey } from "../domain/Errors.ts"
import { MessageStatusSchema } from "../domain/MessageStatus.ts"
import { PermissionSchema } from "../domain/Permissions.ts"
import { SenderName } from "../domain/SenderName.ts"
import { Text } from "../domain/Text.ts"

/** Marks a request made with the operator token. */
export class Operator extends Context.Service<Operator, { readonly authenticated: true }>()("sms/Operator") {}

/** `Authorization: Bearer <SMS_ADMIN_TOKEN>`; customer API keys are never accepted here. */
export class AdminAuth extends HttpApiMiddleware.Service<AdminAuth, { provides: Operator }>()("sms/AdminAuth", {
  security: { adminToken: HttpApiSecurity.bearer },
  error: InvalidApiKey
}) {}

export const Organization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  sms_enabled: Schema.Boolean,
  default_sender_name: Schema.String
}).annotate({ identifier: "Organization" })

const OrgId = { org_id: Text }

/** One status change of a message, with its time and what caused it. */
export const TimelineEntry = Schema.Struct({
  from_status: Schema.NullOr(MessageStatusSchema),
  to_status: MessageStatusSchema,
  source: Schema.Literals(["admission", "provider", "receipt", "verification", "recovery", "dispatch", "erasure"]),
  at: Schema.String
}).annotate({ identifier: "TimelineEntry" })

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createOrganization", "/organizations", {
      payload: Schema.Struct({
        name: Text.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
        default_sender_name: Schema.optionalKey(SenderName)
      }),
      success: Organization.pipe(HttpApiSchema.status(201)),
      error: CommonErrors
    }),
    HttpApiEndpoint.get("getOrganization", "/organizations/:org_id", {
      params: OrgId,
      success: Schema.Struct({ ...Organization.fields, balance: Balance }),
      error: CommonErrors
    }),
    HttpApiEndpoint.patch("updateOrganization", "/organizations/:org_id", {
      params: OrgId,
      payload: Schema.Struct({
        sms_enabled: Schema.optionalKey(Schema.Boolean),
        default_sender_name: Schema.optionalKey(SenderName)
      }),
      success: Organization,
      error: CommonErrors
    }),
    HttpApiEndpoint.post("createApiKey", "/organizations/:org_id/api-keys", {
      params: OrgId,
      payload: Schema.Struct({ permissions: Schema.Array(PermissionSchema).check(Schema.isMaxLength(5)) }),
      success: Schema.Struct({
        key_id: Schema.String,
        api_key: Schema.String,
        permissions: Schema.Array(PermissionSchema)
      }).pipe(HttpApiSchema.status(201)),
      error: CommonErrors
    }),
    HttpApiEndpoint.post("revokeApiKey", "/api-keys/:key_id/revoke", {
      params: { key_id: Text },
      success: Schema.Struct({ key_id: Schema.String, revoked: Schema.Literal(true) }),
      error: CommonErrors
    }),
    HttpApiEndpoint.post("grantCredits", "/organizations/:org_id/credits", {
      params: OrgId,
      payload: Schema.Struct({
        amount: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000_000 })),
        valid_until: Schema.optionalKey(CalendarDate)
      }),
      success: Schema.Struct({ balance: Balance }).pipe(HttpApiSchema.status(201)),
      error: CommonErrors
    }),
    HttpApiEndpoint.put("setSender", "/organizations/:org_id/senders/:name", {
      params: { org_id: Text, name: Text },
      payload: Schema.Struct({ active: Schema.Boolean }),
      success: Schema.Struct({ name: Schema.String, active: Schema.Boolean }),
      error: CommonErrors
    })
  )
  .add(
    HttpApiEndpoint.get("getMessage", "/organizations/:org_id/messages/:message_id", {
      params: { org_id: Text, message_id: Text },
      success: Schema.Struct({ ...Message.fields, timeline: Schema.Array(TimelineEntry) }),
      error: CommonErrors
    }),
    HttpApiEndpoint.post("eraseMessage", "/organizations/:org_id/messages/:message_id/erasure", {
      params: { org_id: Text, message_id: Text },
      success: Message,
      error: [...CommonErrors, ErasureNotAllowed]
    })
  )
  .middleware(AdminAuth)
  .prefix("/admin/v1")
{}

export class AdminApi extends HttpApi.make("sms-admin")
  .add(AdminGroup)
  .middleware(SchemaErrors)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({ title: "SMS Service operator API", version: "1.0.0" }))
{}
