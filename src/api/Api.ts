/** The public v2 API (docs/integrators.md) as HttpApi groups: the contract only, no implementation. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import {
  CommonErrors,
  DispatchUnavailable,
  IdempotencyConflict,
  IdempotencyInProgress,
  InsufficientCredits,
  InsufficientPermissions,
  InvalidCursor,
  InvalidIdempotencyKey,
  InvalidSchedule,
  InvalidSenderName,
  PersonalDataErased,
  ProviderRejected,
  ProviderResultUnknown,
  SenderNameUnavailable,
  SmsUnavailable
} from "../domain/Errors.ts"
import { idempotencyKeyPattern } from "../domain/MessageRules.ts"
import { PhoneNumber } from "../domain/Phone.ts"
import { Text, TextWith } from "../domain/Text.ts"
import { apiDescription, operationDescriptions, tagDescriptions } from "./Descriptions.ts"
import { withResponseHeaders } from "./ResponseHeaders.ts"
import {
  Balance,
  Batch,
  BatchCreate,
  BatchMessages,
  Contact,
  ContactWrite,
  InboundMessage,
  InboundMessages,
  OptOut,
  OptOuts,
  Message,
  MessageCreate,
  Webhook,
  WebhookCreate,
  WebhookCreated,
  WebhookDeliveries,
  WebhookList,
  WebhookSecret,
  WebhookUpdate
} from "./Schemas.ts"
import { ApiKeyAuth, SchemaErrors } from "./Security.ts"

export const apiPrefix = "/api/sms/v2"

/** A path id: documented as a uuid; any other storable text answers 404 (it names no resource). */
const Uuid = TextWith({ format: "uuid" } as Schema.Annotations.Annotations)

export class BalanceGroup extends HttpApiGroup.make("balance")
  .add(
    HttpApiEndpoint.get("get", "/balance/", {
      success: Balance,
      error: [...CommonErrors, InsufficientPermissions]
    })
      .annotate(OpenApi.Summary, "SMS credit balance (permission balance.read)")
      .annotate(OpenApi.Description, operationDescriptions.balance)
  )
  .annotate(OpenApi.Description, tagDescriptions.balance)
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix) {}

export class ContactsGroup extends HttpApiGroup.make("contacts")
  .add(
    HttpApiEndpoint.post("upsert", "/contacts/", {
      payload: ContactWrite,
      success: [Contact.pipe(HttpApiSchema.status(201)), Contact],
      error: [...CommonErrors, InsufficientPermissions]
    })
      .annotate(
        OpenApi.Summary,
        "Create (201) or update (200) the contact with this phone number (permission contacts.manage)"
      )
      .annotate(OpenApi.Description, operationDescriptions.contact)
  )
  .annotate(OpenApi.Description, tagDescriptions.contacts)
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix) {}

/** Required; a missing or malformed key answers 400 invalid_idempotency_key (http/SchemaErrors.ts), never validation_error. */
const IdempotencyKeyHeader = {
  "idempotency-key": Schema.String.check(Schema.isPattern(idempotencyKeyPattern)).annotate({
    description:
      "1 to 128 visible ASCII characters naming this operation: retry with the same key, never a new one automatically"
  })
}
const withLocation = (status: 201 | 202) =>
  HttpApiSchema.WithHeaders(Message.pipe(HttpApiSchema.status(status)), { location: Schema.String })

/** Errors of a creation under an Idempotency-Key (docs/integrators.md#idempotency). */
export const IdempotencyErrors = [InvalidIdempotencyKey, IdempotencyConflict, IdempotencyInProgress] as const

export class MessagesGroup extends HttpApiGroup.make("messages")
  .add(
    HttpApiEndpoint.post("create", "/messages/", {
      headers: IdempotencyKeyHeader,
      payload: MessageCreate,
      success: [withLocation(201), withLocation(202)],
      error: [
        ...CommonErrors,
        ...IdempotencyErrors,
        InsufficientPermissions,
        InvalidSchedule,
        InvalidSenderName,
        SmsUnavailable,
        SenderNameUnavailable,
        InsufficientCredits,
        PersonalDataErased,
        ProviderRejected,
        ProviderResultUnknown,
        DispatchUnavailable
      ]
    })
      .annotate(
        OpenApi.Summary,
        "Send now (201, permission sms.send) or schedule with send_at (202, permission sms.schedule)"
      )
      .annotate(OpenApi.Description, operationDescriptions.createMessage),
    HttpApiEndpoint.get("get", "/messages/:message_id/", {
      params: { message_id: Uuid },
      success: Message,
      error: [...CommonErrors, InsufficientPermissions]
    })
      .annotate(OpenApi.Summary, "Read a message and its delivery outcome (permission delivery.read)")
      .annotate(OpenApi.Description, operationDescriptions.getMessage)
  )
  .annotate(OpenApi.Description, tagDescriptions.messages)
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix) {}

export class MessageBatchesGroup extends HttpApiGroup.make("message-batches")
  .add(
    HttpApiEndpoint.post("create", "/message-batches/", {
      headers: IdempotencyKeyHeader,
      payload: BatchCreate,
      success: HttpApiSchema.WithHeaders(Batch.pipe(HttpApiSchema.status(202)), { location: Schema.String }),
      error: [
        ...CommonErrors,
        ...IdempotencyErrors,
        InsufficientPermissions,
        InvalidSchedule,
        InvalidSenderName,
        SmsUnavailable,
        SenderNameUnavailable,
        InsufficientCredits
      ]
    })
      .annotate(OpenApi.Summary, "Schedule one text to up to 1000 recipients, all or nothing (permission sms.schedule)")
      .annotate(OpenApi.Description, operationDescriptions.createBatch),
    HttpApiEndpoint.get("get", "/message-batches/:batch_id/", {
      params: { batch_id: Uuid },
      success: Batch,
      error: [...CommonErrors, InsufficientPermissions]
    })
      .annotate(OpenApi.Summary, "A batch with its current per-status counts (permission delivery.read)")
      .annotate(OpenApi.Description, operationDescriptions.getBatch),
    HttpApiEndpoint.get("messages", "/message-batches/:batch_id/messages/", {
      params: { batch_id: Uuid },
      query: { cursor: Schema.optionalKey(Text) },
      success: BatchMessages,
      error: [...CommonErrors, InsufficientPermissions, InvalidCursor]
    })
      .annotate(OpenApi.Summary, "The batch's messages in submitted order, 100 per page (permission delivery.read)")
      .annotate(OpenApi.Description, operationDescriptions.batchMessages)
  )
  .annotate(OpenApi.Description, tagDescriptions["message-batches"])
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix) {}

const WebhookId = { webhook_id: Uuid }
const webhookErrors = [...CommonErrors, InsufficientPermissions] as const

/** Status webhooks (docs/decisions.md#webhooks), permission webhooks.manage. */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/webhooks/", {
      headers: IdempotencyKeyHeader,
      payload: WebhookCreate,
      success: HttpApiSchema.WithHeaders(WebhookCreated.pipe(HttpApiSchema.status(201)), { location: Schema.String }),
      error: [...webhookErrors, ...IdempotencyErrors]
    })
      .annotate(
        OpenApi.Summary,
        "Create a webhook endpoint; its secret is in this answer only (permission webhooks.manage)"
      )
      .annotate(OpenApi.Description, operationDescriptions.createWebhook),
    HttpApiEndpoint.get("list", "/webhooks/", { success: WebhookList, error: webhookErrors })
      .annotate(OpenApi.Summary, "The organisation's webhook endpoints, newest first (permission webhooks.manage)")
      .annotate(OpenApi.Description, operationDescriptions.listWebhooks),
    HttpApiEndpoint.get("get", "/webhooks/:webhook_id/", { params: WebhookId, success: Webhook, error: webhookErrors })
      .annotate(OpenApi.Summary, "A webhook endpoint (permission webhooks.manage)")
      .annotate(OpenApi.Description, operationDescriptions.getWebhook),
    HttpApiEndpoint.patch("update", "/webhooks/:webhook_id/", {
      params: WebhookId,
      payload: WebhookUpdate,
      success: Webhook,
      error: webhookErrors
    })
      .annotate(OpenApi.Summary, "Change a webhook endpoint (permission webhooks.manage)")
      .annotate(OpenApi.Description, operationDescriptions.updateWebhook),
    HttpApiEndpoint.delete("delete", "/webhooks/:webhook_id/", {
      params: WebhookId,
      success: HttpApiSchema.NoContent,
      error: webhookErrors
    })
      .annotate(OpenApi.Summary, "Delete a webhook endpoint and its pending deliveries (permission webhooks.manage)")
      .annotate(OpenApi.Description, operationDescriptions.deleteWebhook),
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:webhook_id/secret/", {
      params: WebhookId,
      success: WebhookSecret,
      error: webhookErrors
    })
      .annotate(
        OpenApi.Summary,
        "A new secret; the old one keeps signing beside it for 24 hours (permission webhooks.manage)"
      )
      .annotate(OpenApi.Description, operationDescriptions.rotateWebhookSecret),
    HttpApiEndpoint.get("deliveries", "/webhooks/:webhook_id/deliveries/", {
      params: WebhookId,
      query: { cursor: Schema.optionalKey(Text) },
      success: WebhookDeliveries,
      error: [...webhookErrors, InvalidCursor]
    })
      .annotate(OpenApi.Summary, "The endpoint's deliveries, newest first, 100 per page (permission webhooks.manage)")
      .annotate(OpenApi.Description, operationDescriptions.webhookDeliveries),
    HttpApiEndpoint.post("retry", "/webhooks/:webhook_id/deliveries/:event_id/retry/", {
      params: { webhook_id: Uuid, event_id: Text },
      success: HttpApiSchema.Empty(202),
      error: webhookErrors
    })
      .annotate(OpenApi.Summary, "Attempt a delivery again now, a failed one too (permission webhooks.manage)")
      .annotate(OpenApi.Description, operationDescriptions.retryWebhookDelivery),
    HttpApiEndpoint.post("test", "/webhooks/:webhook_id/test/", {
      params: WebhookId,
      success: HttpApiSchema.Empty(202),
      error: webhookErrors
    })
      .annotate(OpenApi.Summary, "Send a webhook.test event to the endpoint (permission webhooks.manage)")
      .annotate(OpenApi.Description, operationDescriptions.testWebhook)
  )
  .annotate(OpenApi.Description, tagDescriptions.webhooks)
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix) {}

/** Messages mobiles sent to the organisation's numbers (docs/two-way.md), permission inbound.read. */
export class InboundMessagesGroup extends HttpApiGroup.make("inbound-messages")
  .add(
    HttpApiEndpoint.get("list", "/inbound-messages/", {
      query: { cursor: Schema.optionalKey(Text) },
      success: InboundMessages,
      error: [...CommonErrors, InsufficientPermissions, InvalidCursor]
    })
      .annotate(OpenApi.Summary, "Messages received from mobiles, newest first, 100 per page (permission inbound.read)")
      .annotate(OpenApi.Description, operationDescriptions.listInboundMessages),
    HttpApiEndpoint.get("get", "/inbound-messages/:inbound_message_id/", {
      params: { inbound_message_id: Uuid },
      success: InboundMessage,
      error: [...CommonErrors, InsufficientPermissions]
    })
      .annotate(OpenApi.Summary, "One message received from a mobile (permission inbound.read)")
      .annotate(OpenApi.Description, operationDescriptions.getInboundMessage)
  )
  .annotate(OpenApi.Description, tagDescriptions["inbound-messages"])
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix) {}

const OptOutNumber = { phone_number: PhoneNumber }

/** The organisation's opt-out list (docs/two-way.md), permission contacts.manage. */
export class OptOutsGroup extends HttpApiGroup.make("opt-outs")
  .add(
    HttpApiEndpoint.get("list", "/opt-outs/", {
      query: { cursor: Schema.optionalKey(Text) },
      success: OptOuts,
      error: [...CommonErrors, InsufficientPermissions, InvalidCursor]
    })
      .annotate(
        OpenApi.Summary,
        "Numbers opted out of the organisation's messages, newest first (permission contacts.manage)"
      )
      .annotate(OpenApi.Description, operationDescriptions.listOptOuts),
    HttpApiEndpoint.put("put", "/opt-outs/:phone_number/", {
      params: OptOutNumber,
      success: [OptOut.pipe(HttpApiSchema.status(201)), OptOut],
      error: [...CommonErrors, InsufficientPermissions]
    })
      .annotate(OpenApi.Summary, "Opt a number out: 201 now, 200 when it already was (permission contacts.manage)")
      .annotate(OpenApi.Description, operationDescriptions.putOptOut),
    HttpApiEndpoint.delete("delete", "/opt-outs/:phone_number/", {
      params: OptOutNumber,
      success: HttpApiSchema.NoContent,
      error: [...CommonErrors, InsufficientPermissions]
    })
      .annotate(OpenApi.Summary, "Opt a number back in; 404 when it is not opted out (permission contacts.manage)")
      .annotate(OpenApi.Description, operationDescriptions.deleteOptOut)
  )
  .annotate(OpenApi.Description, tagDescriptions["opt-outs"])
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix) {}

export class Api extends HttpApi.make("sms")
  .add(BalanceGroup)
  .add(ContactsGroup)
  .add(MessagesGroup)
  .add(MessageBatchesGroup)
  .add(WebhooksGroup)
  .add(InboundMessagesGroup)
  .add(OptOutsGroup)
  .middleware(SchemaErrors)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(
    OpenApi.annotations({
      title: "SMS Integration Service",
      version: "2.0.2",
      description: apiDescription,
      // relative: the document describes the server that serves it
      servers: [{ url: "/", description: "This service" }],
      transform: withResponseHeaders
    })
  ) {}
