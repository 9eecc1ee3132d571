/** The operator API (docs/operators.md#operator-api-and-cli) under /admin/v1: the contract only, no implementation. */
import { Context, Schema } from "effect"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "effect/http-api"
import {
  Balance,
  Batch,
  InboundMessage,
  InboundMessages,
  Message,
  OptOuts,
  Webhook,
  WebhookDeliveries
} from "../api/Schemas.ts"
import { SchemaErrors } from "../api/Security.ts"
import { retentionDaysMax } from "../config/Config.ts"
import { CalendarDate } from "../domain/Dates.ts"
import {
  ClockNotTest,
  CommonErrors,
  ErasureNotAllowed,
  InboundNumberTaken,
  InvalidApiKey,
  InvalidCursor,
  MessageNotAccepted,
  MessageNotUnknown,
  ProviderNotSimulator,
  SimulatorOnly
} from "../domain/Errors.ts"
import { PhoneNumber } from "../domain/Phone.ts"
import { MessageStatusSchema } from "../domain/MessageStatus.ts"
import { Permissions, PermissionSchema } from "../domain/Permissions.ts"
import { SenderName } from "../domain/SenderName.ts"
import { Text, TextWith } from "../domain/Text.ts"

/** Marks a request made with the operator token. */
export class Operator extends Context.Service<Operator, { readonly authenticated: true }>()("sms/Operator") {}

/** `Authorization: Bearer <SMS_ADMIN_TOKEN>`; customer API keys are never accepted here. */
export class AdminAuth extends HttpApiMiddleware.Service<AdminAuth, { provides: Operator }>()("sms/AdminAuth", {
  security: { adminToken: HttpApiSecurity.bearer },
  error: InvalidApiKey
}) {}

/** An organisation as the operator API shows it. */
export const OrganisationBody = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  sms_enabled: Schema.Boolean,
  default_sender_name: Schema.String,
  /** Days a message's personal data is kept once final; null: the service's default (SMS_RETENTION_DAYS). */
  retention_days: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "Organisation" })

const OrgId = { org_id: Text }

/** An organisation's retention in days (docs/decisions.md#retention): a whole number from 1. */
const RetentionDays = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: retentionDaysMax }))

/** One status change of a message, with its time and what caused it. */
export const TimelineEntry = Schema.Struct({
  from_status: Schema.NullOr(MessageStatusSchema),
  to_status: MessageStatusSchema,
  source: Schema.Literals([
    "admission",
    "provider",
    "receipt",
    "verification",
    "recovery",
    "dispatch",
    "erasure",
    "matched_receipt",
    "opted_out"
  ]),
  at: Schema.String,
  /** On the move to `accepted`: the route that took the message (its own, or a fallback). */
  route: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "TimelineEntry" })

/** Most rows one page of an operator list holds (organisations, an organisation's messages or batches). */
export const listPageMax = 100

/** `?limit=` (1 to listPageMax, default listPageMax) and `?cursor=` (a previous page's next_cursor). */
const PageQuery = {
  limit: Schema.optionalKey(
    Schema.FiniteFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: listPageMax }))
  ),
  cursor: Schema.optionalKey(Text)
}

/** One page of organisations, newest first; `next_cursor` continues it (null on the last page). */
export const OrganisationPage = Schema.Struct({
  results: Schema.Array(Schema.Struct({ ...OrganisationBody.fields, created_at: Schema.String })),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OrganisationPage" })

/** An API key as the operator sees it: never its secret. */
export const ApiKeySummary = Schema.Struct({
  key_id: Schema.String,
  permissions: Schema.Array(PermissionSchema),
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ApiKeySummary" })

/** A registered sender name and whether messages may use it. */
export const SenderBody = Schema.Struct({ name: Schema.String, active: Schema.Boolean }).annotate({
  identifier: "Sender"
})

/** A message with its timeline: every status change, oldest first. */
export const MessageWithTimeline = Schema.Struct({ ...Message.fields, timeline: Schema.Array(TimelineEntry) }).annotate(
  { identifier: "MessageWithTimeline" }
)

/** One page of an organisation's messages, newest first; `next_cursor` continues it (null on the last page). */
export const MessagePage = Schema.Struct({
  results: Schema.Array(
    Schema.Struct({ ...Message.fields, batch_id: Schema.NullOr(Schema.String), created_at: Schema.String })
  ),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "MessagePage" })

/** One page of an organisation's batches with their live counts, newest first. */
export const BatchPage = Schema.Struct({
  results: Schema.Array(Batch),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "BatchPage" })

/** A message with its organisation and its timeline, found by id alone. */
export const OperatorMessage = Schema.Struct({
  ...Message.fields,
  org_id: Schema.String,
  timeline: Schema.Array(TimelineEntry)
}).annotate({ identifier: "OperatorMessage" })

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createOrganisation", "/organizations", {
      payload: Schema.Struct({
        name: Text.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
        default_sender_name: Schema.optionalKey(SenderName)
      }),
      success: OrganisationBody.pipe(HttpApiSchema.status(201)),
      error: CommonErrors
    }),
    HttpApiEndpoint.get("getOrganisation", "/organizations/:org_id", {
      params: OrgId,
      success: Schema.Struct({ ...OrganisationBody.fields, balance: Balance }),
      error: CommonErrors
    }),
    HttpApiEndpoint.patch("updateOrganisation", "/organizations/:org_id", {
      params: OrgId,
      payload: Schema.Struct({
        sms_enabled: Schema.optionalKey(Schema.Boolean),
        default_sender_name: Schema.optionalKey(SenderName),
        retention_days: Schema.optionalKey(Schema.NullOr(RetentionDays))
      }),
      success: OrganisationBody,
      error: CommonErrors
    }),
    HttpApiEndpoint.post("createApiKey", "/organizations/:org_id/api-keys", {
      params: OrgId,
      payload: Schema.Struct({
        permissions: Schema.Array(PermissionSchema).check(Schema.isMaxLength(Permissions.length))
      }),
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
      success: MessageWithTimeline,
      error: CommonErrors
    }),
    HttpApiEndpoint.post("eraseMessage", "/organizations/:org_id/messages/:message_id/erasure", {
      params: { org_id: Text, message_id: Text },
      success: Message,
      error: [...CommonErrors, ErasureNotAllowed]
    }),
    HttpApiEndpoint.post("verifyMessage", "/organizations/:org_id/messages/:message_id/verification", {
      params: { org_id: Text, message_id: Text },
      success: MessageWithTimeline,
      error: [...CommonErrors, MessageNotUnknown]
    }).annotate(
      OpenApi.Summary,
      "Ask the provider again now about an unknown message, and start its verification schedule again"
    )
  )
  .add(
    HttpApiEndpoint.get("listOrganisations", "/organizations", {
      query: PageQuery,
      success: OrganisationPage,
      error: [...CommonErrors, InvalidCursor]
    }),
    HttpApiEndpoint.get("listApiKeys", "/organizations/:org_id/api-keys", {
      params: OrgId,
      success: Schema.Struct({ results: Schema.Array(ApiKeySummary) }),
      error: CommonErrors
    }),
    HttpApiEndpoint.get("listSenders", "/organizations/:org_id/senders", {
      params: OrgId,
      success: Schema.Struct({ results: Schema.Array(SenderBody) }),
      error: CommonErrors
    }),
    HttpApiEndpoint.get("findMessage", "/messages/:message_id", {
      params: { message_id: Text },
      success: OperatorMessage,
      error: CommonErrors
    })
  )
  .middleware(AdminAuth)
  .prefix("/admin/v1") {}

/** An organisation's activity for the console: its messages (with their status) and batches (with their counts). */
export class ActivityGroup extends HttpApiGroup.make("activity")
  .add(
    HttpApiEndpoint.get("listMessages", "/organizations/:org_id/messages", {
      params: OrgId,
      query: { ...PageQuery, status: Schema.optionalKey(MessageStatusSchema) },
      success: MessagePage,
      error: [...CommonErrors, InvalidCursor]
    }).annotate(OpenApi.Summary, "The organisation's messages, newest first, optionally of one status"),
    HttpApiEndpoint.get("listBatches", "/organizations/:org_id/batches", {
      params: OrgId,
      query: PageQuery,
      success: BatchPage,
      error: [...CommonErrors, InvalidCursor]
    }).annotate(OpenApi.Summary, "The organisation's batches with their live counts, newest first")
  )
  .middleware(AdminAuth)
  .prefix("/admin/v1") {}

/** An endpoint as the operator sees it: with why the address rules refuse its URL now, if they do. */
export const OperatorWebhook = Schema.Struct({
  ...Webhook.fields,
  url_refused: Schema.NullOr(Schema.String).annotate({
    description:
      "Why the address rules (SMS_WEBHOOK_ALLOW_PRIVATE) refuse the URL now, so that its deliveries fail; null when they do not"
  })
}).annotate({ identifier: "OperatorWebhook" })

/** The organisation's endpoints (at most ten), in the envelope of every list: `next_cursor` is always null. */
export const OperatorWebhookList = Schema.Struct({
  results: Schema.Array(OperatorWebhook),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OperatorWebhookList" })

/** An organisation's status webhook endpoints (docs/decisions.md#webhooks): list them, turn one off or on. */
export class WebhooksAdminGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/organizations/:org_id/webhooks", {
      params: OrgId,
      success: OperatorWebhookList,
      error: CommonErrors
    }).annotate(OpenApi.Summary, "The organisation's webhook endpoints, newest first (never their secrets)"),
    HttpApiEndpoint.patch("setEnabled", "/organizations/:org_id/webhooks/:webhook_id", {
      params: { org_id: Text, webhook_id: Text },
      payload: Schema.Struct({ enabled: Schema.Boolean }),
      success: Webhook,
      error: CommonErrors
    }).annotate(OpenApi.Summary, "Disable (or enable again) one of the organisation's webhook endpoints"),
    HttpApiEndpoint.get("deliveries", "/organizations/:org_id/webhooks/:webhook_id/deliveries", {
      params: { org_id: Text, webhook_id: Text },
      query: { cursor: Schema.optionalKey(Text) },
      success: WebhookDeliveries,
      error: [...CommonErrors, InvalidCursor]
    }).annotate(OpenApi.Summary, "An endpoint's delivery log, newest first, 100 per page (what the console shows)")
  )
  .middleware(AdminAuth)
  .prefix("/admin/v1") {}

/** A number an organisation receives on: its own (`keyword` null) or shared, with its keyword. */
export const InboundNumberBody = Schema.Struct({
  number: Schema.String,
  keyword: Schema.NullOr(Schema.String)
}).annotate({ identifier: "InboundNumber" })

/** An inbound message with the organisation it was routed to (null: unrouted). */
export const OperatorInboundMessage = Schema.Struct({
  ...InboundMessage.fields,
  org_id: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OperatorInboundMessage" })

/**
 * Two-way messages (docs/two-way.md): the numbers organisations
 * receive on, the inbound messages (the unrouted ones above all, kept for the operator), and one
 * organisation's inbound messages and opt-out list as its API shows them (what the console shows).
 */
export class InboundAdminGroup extends HttpApiGroup.make("inbound")
  .add(
    HttpApiEndpoint.put("assignNumber", "/organizations/:org_id/inbound-numbers/:number", {
      params: { org_id: Text, number: Text },
      payload: Schema.Struct({ keyword: Schema.optionalKey(Text) }),
      success: InboundNumberBody,
      error: [...CommonErrors, InboundNumberTaken]
    }).annotate(
      OpenApi.Summary,
      "Give the organisation a number (a short code of 3 to 8 digits or an E.164 number): alone, or shared with a keyword"
    ),
    HttpApiEndpoint.delete("removeNumber", "/organizations/:org_id/inbound-numbers/:number", {
      params: { org_id: Text, number: Text },
      success: HttpApiSchema.NoContent,
      error: CommonErrors
    }).annotate(OpenApi.Summary, "Take a number (and its keywords) from the organisation"),
    HttpApiEndpoint.get("listNumbers", "/organizations/:org_id/inbound-numbers", {
      params: OrgId,
      success: Schema.Struct({ results: Schema.Array(InboundNumberBody) }),
      error: CommonErrors
    }).annotate(OpenApi.Summary, "The numbers the organisation receives on"),
    HttpApiEndpoint.get("listOrganisationMessages", "/organizations/:org_id/inbound-messages", {
      params: OrgId,
      query: { cursor: Schema.optionalKey(Text) },
      success: InboundMessages,
      error: [...CommonErrors, InvalidCursor]
    }).annotate(OpenApi.Summary, "The organisation's inbound messages, newest first, 100 per page"),
    HttpApiEndpoint.get("listOptOuts", "/organizations/:org_id/opt-outs", {
      params: OrgId,
      query: { cursor: Schema.optionalKey(Text) },
      success: OptOuts,
      error: [...CommonErrors, InvalidCursor]
    }).annotate(OpenApi.Summary, "The numbers opted out of the organisation's messages, newest first, 100 per page"),
    HttpApiEndpoint.get("listMessages", "/inbound-messages", {
      query: {
        routed: Schema.optionalKey(Schema.Literals(["true", "false"])),
        cursor: Schema.optionalKey(Text)
      },
      success: Schema.Struct({
        results: Schema.Array(OperatorInboundMessage),
        next_cursor: Schema.NullOr(Schema.String)
      }),
      error: [...CommonErrors, InvalidCursor]
    }).annotate(
      OpenApi.Summary,
      "Inbound messages of every organisation, newest first, 100 per page; ?routed=false: those no organisation took"
    )
  )
  .middleware(AdminAuth)
  .prefix("/admin/v1") {}

/** What the simulated provider (docs/decisions.md#the-provider-simulator) can be made to do on demand. */
export class SimulatorGroup extends HttpApiGroup.make("simulator")
  .add(
    HttpApiEndpoint.post("sendReceipt", "/organizations/:org_id/messages/:message_id/receipt", {
      params: { org_id: Text, message_id: Text },
      payload: Schema.Struct({ outcome: Schema.Literals(["delivered", "undeliverable"]) }),
      success: MessageWithTimeline,
      error: [...CommonErrors, MessageNotAccepted, ProviderNotSimulator]
    }).annotate(
      OpenApi.Summary,
      "Make the simulator send a delivery receipt now for an accepted message, applied like any receipt"
    ),
    HttpApiEndpoint.post("sendInbound", "/simulator/inbound", {
      payload: Schema.Struct({ from: PhoneNumber, to: Text, text: Text.check(Schema.isMinLength(1)) }),
      success: HttpApiSchema.Empty(202),
      error: [...CommonErrors, SimulatorOnly]
    }).annotate(
      OpenApi.Summary,
      "Make the simulator send an inbound message now (simulator mode only): 202 once it is stored and made into a message"
    )
  )
  .middleware(AdminAuth)
  .prefix("/admin/v1") {}

const DateTime = TextWith({ format: "date-time" } as Schema.Annotations.Annotations)

/** The service's clock (docs/decisions.md#the-test-clock): read it; under SMS_CLOCK=test, advance it. */
export class ClockGroup extends HttpApiGroup.make("clock")
  .add(
    HttpApiEndpoint.get("get", "/clock", {
      success: Schema.Struct({ now: DateTime, mode: Schema.Literals(["system", "test"]) }),
      error: CommonErrors
    }).annotate(OpenApi.Summary, "The service's current time and whether it is a test clock"),
    HttpApiEndpoint.post("advance", "/clock/advance", {
      payload: Schema.Struct({
        seconds: Schema.optionalKey(Schema.Finite),
        to: Schema.optionalKey(DateTime)
      }),
      success: Schema.Struct({ now: DateTime }),
      error: [...CommonErrors, ClockNotTest]
    }).annotate(
      OpenApi.Summary,
      "Move the test clock forward (by seconds, or to an instant); answers once all work due by then is done"
    )
  )
  .middleware(AdminAuth)
  .prefix("/admin/v1") {}

export class AdminApi extends HttpApi.make("sms-admin")
  .add(AdminGroup)
  .add(ActivityGroup)
  .add(WebhooksAdminGroup)
  .add(SimulatorGroup)
  .add(ClockGroup)
  .add(InboundAdminGroup)
  .middleware(SchemaErrors)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({ title: "SMS Service operator API", version: "1.0.0" })) {}
