/** Request and response bodies of the public API, field for field as docs/integrators.md writes them. */
import { Schema } from "effect"
import { CalendarDate } from "../domain/Dates.ts"
import { MessageStatusSchema } from "../domain/MessageStatus.ts"
import { PhoneNumber } from "../domain/Phone.ts"
import { Text, TextWith } from "../domain/Text.ts"
import { WebhookEventTypeSchema } from "../domain/Webhooks.ts"

const maxLength = (n: number) => Text.check(Schema.isMaxLength(n))
const lengthBetween = (min: number, max: number) => Text.check(Schema.isMinLength(min), Schema.isMaxLength(max))

/** Spec 2.7. */
export const Balance = Schema.Struct({
  total: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  reserved: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  available: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  valid_until: Schema.NullOr(CalendarDate)
}).annotate({ identifier: "Balance" })
export type Balance = typeof Balance.Type

// `u`: lets the OpenAPI document carry the pattern
const emailPattern = /^$|^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/u

/** An e-mail address of at most 254 characters, or the empty string. */
export const Email = Text.check(
  Schema.isMaxLength(254),
  Schema.isPattern(emailPattern, { message: "must be an e-mail address or an empty string" })
)

/**
 * `status` is an int64. JSON numbers beyond 2^53 do not survive `JSON.parse`, so the contacts
 * endpoint parses its body losslessly (contacts/LosslessJson.ts) and decodes `status` as a
 * `bigint` (`Int64`); `Int64Wire` describes the same field on the wire for the OpenAPI document.
 */
export const Int64 = Schema.BigInt.check(
  Schema.makeFilter((n: bigint) => (n >= -(2n ** 63n) && n <= 2n ** 63n - 1n) || "must be a 64-bit signed integer")
).annotate({ message: "must be an integer (int64)" })
const Int64Wire = Schema.Finite.check(
  Schema.makeFilter((n: number) => Number.isInteger(n) || "must be an integer", {
    toJsonSchema: () => ({ type: "integer", format: "int64" })
  })
).annotate({ description: "64-bit signed integer" })

const contactFields = <S extends Schema.Top>(status: S) => ({
  phone_number: PhoneNumber,
  first_name: Schema.optionalKey(Schema.NullOr(maxLength(100))),
  company: Schema.optionalKey(Schema.NullOr(maxLength(100))),
  position: Schema.optionalKey(Schema.NullOr(maxLength(100))),
  address: Schema.optionalKey(Schema.NullOr(Text)),
  birthday: Schema.optionalKey(Schema.NullOr(CalendarDate)),
  home_email: Schema.optionalKey(Schema.NullOr(Email)),
  office_email: Schema.optionalKey(Schema.NullOr(Email)),
  list_name: Schema.optionalKey(lengthBetween(1, 100)),
  source: Schema.optionalKey(lengthBetween(1, 50)),
  status: Schema.optionalKey(status)
})

/** Spec 2.8 as documented: absent optional fields stay unchanged on update, `null` clears. */
export const ContactWrite = Schema.Struct(contactFields(Int64Wire)).annotate({ identifier: "ContactWrite" })

/** Spec 2.8 as decoded from a losslessly parsed body: `status` is a bigint. */
export const ContactWriteInput = Schema.Struct(contactFields(Int64))
export type ContactWriteInput = typeof ContactWriteInput.Type

/** Spec 2.9 as documented (the handler writes the body itself to keep int64 exact). */
export const Contact = Schema.Struct({ id: Schema.Int, ...contactFields(Int64Wire) }).annotate({
  identifier: "Contact"
})

const SendAtField = TextWith({
  format: "date-time",
  description: "Future RFC 3339 timestamp with explicit timezone"
} as Schema.Annotations.Annotations)
const SenderNameField = Text.annotate({ description: "1 to 11 ASCII letters, digits or internal spaces" })

/** Spec 2.3. Text segments, sender name syntax and the schedule are checked after decoding (domain/MessageRules.ts). */
export const MessageCreate = Schema.Struct({
  text: lengthBetween(1, 320),
  to: PhoneNumber,
  send_at: Schema.optionalKey(SendAtField),
  sender_name: Schema.optionalKey(SenderNameField)
}).annotate({ identifier: "MessageCreate" })
export type MessageCreate = typeof MessageCreate.Type

/** What `delivery_time` means (the spec says only "Delivery time"). */
const deliveryTimeDescription =
  "The time the receipt reported the final delivery outcome (delivered or undeliverable); null for every other status"

const DateTimeOrNull = Schema.NullOr(Schema.String.annotate({ format: "date-time" } as Schema.Annotations.Annotations))

/** Spec 2.2. */
export const Message = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" } as Schema.Annotations.Annotations),
  to: Schema.String,
  sender_name: Schema.String,
  status: MessageStatusSchema,
  segments: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 2 })),
  send_at: DateTimeOrNull,
  delivery_time: DateTimeOrNull.annotate({ description: deliveryTimeDescription })
}).annotate({ identifier: "Message" })

const recipientsMessage = "must list 1 to 1000 phone numbers"

/** Spec 2.4. Distinctness of recipients is checked after decoding, naming the duplicate positions. */
export const BatchCreate = Schema.Struct({
  recipients: Schema.Array(PhoneNumber).check(
    Schema.isMinLength(1, { message: recipientsMessage }),
    Schema.isMaxLength(1000, { message: recipientsMessage })
  ),
  send_at: SendAtField,
  text: lengthBetween(1, 320),
  sender_name: Schema.optionalKey(SenderNameField)
}).annotate({ identifier: "BatchCreate" })
export type BatchCreate = typeof BatchCreate.Type

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Spec 2.5 StatusCounts: one count per message status. */
export const StatusCounts = Schema.Struct({
  scheduled: Count,
  processing: Count,
  accepted: Count,
  delivered: Count,
  undeliverable: Count,
  blocked: Count,
  failed: Count,
  unknown: Count
}).annotate({ identifier: "StatusCounts" })

/** Spec 2.5. */
export const Batch = Schema.Struct({
  id: Schema.String.annotate({ format: "uuid" } as Schema.Annotations.Annotations),
  recipient_count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  credits_reserved: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  send_at: Schema.String.annotate({ format: "date-time" } as Schema.Annotations.Annotations),
  created_at: Schema.String.annotate({ format: "date-time" } as Schema.Annotations.Annotations),
  counts: StatusCounts
}).annotate({ identifier: "Batch" })

/** Spec 2.6. */
export const BatchMessages = Schema.Struct({
  results: Schema.Array(Message),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "BatchMessages" })

// ---------------------------------------------------------------------------------------------
// Status webhooks (docs/decisions.md#webhooks). The URL's rules (scheme, length, credentials, address)
// are checked by the service, which names `url` in its 400.

const DateTime = Schema.String.annotate({ format: "date-time" } as Schema.Annotations.Annotations)
const WebhookEvents = Schema.Array(WebhookEventTypeSchema).check(
  Schema.isMinLength(1, { message: "must list at least one event type (leave it out for every type)" })
)
const WebhookDescription = Schema.NullOr(maxLength(500))

/** POST /webhooks/. */
export const WebhookCreate = Schema.Struct({
  url: Text,
  events: Schema.optionalKey(WebhookEvents),
  description: Schema.optionalKey(WebhookDescription)
}).annotate({ identifier: "WebhookCreate" })
export type WebhookCreate = typeof WebhookCreate.Type

/** PATCH /webhooks/{id}/: absent fields stay unchanged. */
export const WebhookUpdate = Schema.Struct({
  url: Schema.optionalKey(Text),
  events: Schema.optionalKey(WebhookEvents),
  description: Schema.optionalKey(WebhookDescription),
  enabled: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "WebhookUpdate" })

const webhookFields = {
  id: Schema.String.annotate({ format: "uuid" } as Schema.Annotations.Annotations),
  url: Schema.String,
  events: Schema.Array(Schema.String),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  created_at: DateTime
}

/** An endpoint, never with its secret. */
export const Webhook = Schema.Struct(webhookFields).annotate({ identifier: "Webhook" })

/** The answer of a creation: the only one that shows the secret. */
export const WebhookCreated = Schema.Struct({ ...webhookFields, secret: Schema.String }).annotate({
  identifier: "WebhookCreated"
})

/** Every endpoint of the organisation (at most ten) in the envelope of every list: one page, `next_cursor` always null. */
export const WebhookList = Schema.Struct({
  results: Schema.Array(Webhook),
  next_cursor: Schema.NullOr(Schema.String).annotate({ description: "Always null: every endpoint fits in one page" })
}).annotate({ identifier: "WebhookList" })

export const WebhookSecret = Schema.Struct({ secret: Schema.String }).annotate({ identifier: "WebhookSecret" })

/** One line of an endpoint's delivery log. */
export const WebhookDelivery = Schema.Struct({
  event_id: Schema.String,
  type: Schema.String,
  state: Schema.Literals(["pending", "succeeded", "failed"]),
  attempts: Count,
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(DateTime),
  created_at: DateTime
}).annotate({ identifier: "WebhookDelivery" })

export const WebhookDeliveries = Schema.Struct({
  results: Schema.Array(WebhookDelivery),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "WebhookDeliveries" })

// ---------------------------------------------------------------------------------------------
// Two-way messages and consent (docs/two-way.md).

const Uuid = Schema.String.annotate({ format: "uuid" } as Schema.Annotations.Annotations)

/** A message a mobile sent to one of the organisation's numbers. */
export const InboundMessage = Schema.Struct({
  id: Uuid,
  from: Schema.String,
  to: Schema.String,
  text: Schema.String,
  keyword: Schema.NullOr(Schema.String),
  segments: Count,
  incomplete: Schema.Boolean,
  in_reply_to: Schema.NullOr(Uuid),
  received_at: DateTime
}).annotate({ identifier: "InboundMessage" })

export const InboundMessages = Schema.Struct({
  results: Schema.Array(InboundMessage),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "InboundMessages" })

/** A number opted out of the organisation's messages, and how. */
export const OptOut = Schema.Struct({
  phone_number: Schema.String,
  source: Schema.Literals(["sms", "api", "operator"]),
  inbound_message_id: Schema.NullOr(Uuid),
  created_at: DateTime
}).annotate({ identifier: "OptOut" })

export const OptOuts = Schema.Struct({
  results: Schema.Array(OptOut),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OptOuts" })
