/**
 * One error class per row of the spec's error table (section 7), plus those the service adds
 * (413 `payload_too_large`; operator-only 409 `erasure_not_allowed`, `clock_not_test`,
 * `message_not_accepted`, `message_not_unknown` and `provider_not_simulator`). The HTTP
 * server's answers to what Node's parser refuses (400 `bad_request`, 408 `request_timeout`, 431
 * `headers_too_large`) are written before any route runs, by http/NodeServer.ts. Each class carries its HTTP
 * status and serialises to exactly the spec's error body (2.10):
 * `{ "error": { "code", "message", "details"? }, "message_id"? }`.
 */
import { type Cause, Schema } from "effect"

/** One entry of `error.details` for validation failures: which field, and what is wrong with it. */
export const ErrorDetail = Schema.Struct({ field: Schema.String, message: Schema.String })
export type ErrorDetail = typeof ErrorDetail.Type

const errorFields = <Code extends Schema.Top>(code: Code) => ({
  error: Schema.Struct({
    code,
    message: Schema.String,
    details: Schema.optionalKey(Schema.Array(ErrorDetail))
  }),
  message_id: Schema.optionalKey(Schema.String)
})

/** The docs/integrators.md#errors error body whatever its code: the shape of every error answer of the service. */
export const ErrorBody = Schema.Struct(errorFields(Schema.String))
export type ErrorBody = typeof ErrorBody.Type

export interface ErrorExtras {
  readonly details?: ReadonlyArray<ErrorDetail>
  readonly messageId?: string
}

/** The fields of one error code's class: the docs/integrators.md#errors body with `code` fixed. */
type ErrorFields<Code extends string> = ReturnType<typeof errorFields<Schema.Literal<Code>>>

/** An instance of one error code's class: the spec's error body, yieldable in `Effect.gen`. */
export interface ApiErrorOf<Tag extends string, Code extends string>
  extends Cause.YieldableError,
    Schema.Struct.Type<ErrorFields<Code>> {
  readonly _tag: Tag
}

/**
 * The class of one error code (named, so that the client's declarations can refer to it): its
 * schema, its code and HTTP status, and `withMessage`.
 */
export interface ApiErrorClass<Tag extends string, Code extends string>
  extends Schema.Class<
    ApiErrorOf<Tag, Code>,
    Schema.Struct<ErrorFields<Code>>,
    Cause.YieldableError & { readonly _tag: Tag }
  > {
  readonly code: Code
  readonly status: number
  /** Builds the error from a message and optional details or message id. */
  withMessage<T>(
    this: new (
      props: Schema.Struct.Type<ErrorFields<Code>>
    ) => T,
    message: string,
    extras?: ErrorExtras
  ): T
}

/**
 * Builds the class for one error code. `Schema.Error` (not `TaggedError`) keeps `_tag` off the
 * wire; the getter keeps `Effect.catchTag` working.
 */
const ApiError = <const Tag extends string, const Code extends string>(
  tag: Tag,
  code: Code,
  status: number
): ApiErrorClass<Tag, Code> => {
  class Base extends Schema.Error<Base>(tag)(errorFields(Schema.Literal(code)), { httpApiStatus: status }) {
    static readonly code: Code = code
    static readonly status: number = status
    get _tag(): Tag {
      return tag
    }
    static withMessage<T>(
      this: new (
        props: ConstructorParameters<typeof Base>[0]
      ) => T,
      message: string,
      extras: ErrorExtras = {}
    ): T {
      return new this({
        error: { code, message, ...(extras.details === undefined ? {} : { details: extras.details }) },
        ...(extras.messageId === undefined ? {} : { message_id: extras.messageId })
      })
    }
  }
  return Base
}

export class ValidationError extends ApiError("ValidationError", "validation_error", 400) {}
export class ParseError extends ApiError("ParseError", "parse_error", 400) {}
export class InvalidOrganisationHeader extends ApiError(
  "InvalidOrganisationHeader",
  "invalid_organization_header",
  400
) {}
export class InvalidIdempotencyKey extends ApiError("InvalidIdempotencyKey", "invalid_idempotency_key", 400) {}
export class InvalidSchedule extends ApiError("InvalidSchedule", "invalid_schedule", 400) {}
export class InvalidSenderName extends ApiError("InvalidSenderName", "invalid_sender_name", 400) {}
export class InvalidCursor extends ApiError("InvalidCursor", "invalid_cursor", 400) {}
export class InvalidApiKey extends ApiError("InvalidApiKey", "invalid_api_key", 401) {}
export class InsufficientPermissions extends ApiError("InsufficientPermissions", "insufficient_permissions", 403) {}
export class SmsUnavailable extends ApiError("SmsUnavailable", "sms_unavailable", 403) {}
export class SenderNameUnavailable extends ApiError("SenderNameUnavailable", "sender_name_unavailable", 403) {}
export class NotFound extends ApiError("NotFound", "not_found", 404) {}
export class MethodNotAllowed extends ApiError("MethodNotAllowed", "method_not_allowed", 405) {}
export class NotAcceptable extends ApiError("NotAcceptable", "not_acceptable", 406) {}
export class IdempotencyConflict extends ApiError("IdempotencyConflict", "idempotency_conflict", 409) {}
export class IdempotencyInProgress extends ApiError("IdempotencyInProgress", "idempotency_in_progress", 409) {}
export class InsufficientCredits extends ApiError("InsufficientCredits", "insufficient_credits", 409) {}
export class ErasureNotAllowed extends ApiError("ErasureNotAllowed", "erasure_not_allowed", 409) {}
export class ClockNotTest extends ApiError("ClockNotTest", "clock_not_test", 409) {}
export class MessageNotAccepted extends ApiError("MessageNotAccepted", "message_not_accepted", 409) {}
export class MessageNotUnknown extends ApiError("MessageNotUnknown", "message_not_unknown", 409) {}
export class ProviderNotSimulator extends ApiError("ProviderNotSimulator", "provider_not_simulator", 409) {}
export class InboundNumberTaken extends ApiError("InboundNumberTaken", "inbound_number_taken", 409) {}
export class SimulatorOnly extends ApiError("SimulatorOnly", "simulator_only", 409) {}
export class PersonalDataErased extends ApiError("PersonalDataErased", "personal_data_erased", 410) {}
export class PayloadTooLarge extends ApiError("PayloadTooLarge", "payload_too_large", 413) {}
export class UnsupportedMediaType extends ApiError("UnsupportedMediaType", "unsupported_media_type", 415) {}
export class InternalError extends ApiError("InternalError", "internal_error", 500) {}
export class ProviderRejected extends ApiError("ProviderRejected", "provider_rejected", 502) {}
export class ProviderResultUnknown extends ApiError("ProviderResultUnknown", "provider_result_unknown", 502) {}
export class ServiceUnavailable extends ApiError("ServiceUnavailable", "service_unavailable", 503) {}
export class DispatchUnavailable extends ApiError("DispatchUnavailable", "dispatch_unavailable", 503) {}

/** The errors any endpoint of either API can answer, whatever it does. */
export const CommonErrors = [
  ValidationError,
  ParseError,
  InvalidApiKey,
  NotFound,
  MethodNotAllowed,
  NotAcceptable,
  PayloadTooLarge,
  UnsupportedMediaType,
  InternalError,
  ServiceUnavailable
] as const

/** Plain JSON error body, for the HTTP edge where no schema encoder runs (router fallbacks). */
export const errorBody = (code: string, message: string, extras: ErrorExtras = {}) => ({
  error: { code, message, ...(extras.details === undefined ? {} : { details: extras.details }) },
  ...(extras.messageId === undefined ? {} : { message_id: extras.messageId })
})
