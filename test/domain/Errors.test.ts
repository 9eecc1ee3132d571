/** The error table (docs/integrators.md#errors and the service's own rows): codes, statuses, the wire body. */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as Errors from "../../src/domain/Errors.ts"

/** Written out independently of the implementation: tag, code, HTTP status. */
const table: ReadonlyArray<readonly [string, string, number]> = [
  ["ValidationError", "validation_error", 400],
  ["ParseError", "parse_error", 400],
  ["InvalidOrganisationHeader", "invalid_organization_header", 400],
  ["InvalidIdempotencyKey", "invalid_idempotency_key", 400],
  ["InvalidSchedule", "invalid_schedule", 400],
  ["InvalidSenderName", "invalid_sender_name", 400],
  ["InvalidCursor", "invalid_cursor", 400],
  ["InvalidApiKey", "invalid_api_key", 401],
  ["InsufficientPermissions", "insufficient_permissions", 403],
  ["SmsUnavailable", "sms_unavailable", 403],
  ["SenderNameUnavailable", "sender_name_unavailable", 403],
  ["NotFound", "not_found", 404],
  ["MethodNotAllowed", "method_not_allowed", 405],
  ["NotAcceptable", "not_acceptable", 406],
  ["IdempotencyConflict", "idempotency_conflict", 409],
  ["IdempotencyInProgress", "idempotency_in_progress", 409],
  ["InsufficientCredits", "insufficient_credits", 409],
  ["ErasureNotAllowed", "erasure_not_allowed", 409],
  ["ClockNotTest", "clock_not_test", 409],
  ["MessageNotAccepted", "message_not_accepted", 409],
  ["MessageNotUnknown", "message_not_unknown", 409],
  ["ProviderNotSimulator", "provider_not_simulator", 409],
  ["InboundNumberTaken", "inbound_number_taken", 409],
  ["SimulatorOnly", "simulator_only", 409],
  ["PersonalDataErased", "personal_data_erased", 410],
  ["PayloadTooLarge", "payload_too_large", 413],
  ["UnsupportedMediaType", "unsupported_media_type", 415],
  ["InternalError", "internal_error", 500],
  ["ProviderRejected", "provider_rejected", 502],
  ["ProviderResultUnknown", "provider_result_unknown", 502],
  ["ServiceUnavailable", "service_unavailable", 503],
  ["DispatchUnavailable", "dispatch_unavailable", 503]
]

type ErrorClass = typeof Errors.ValidationError
const classes = Errors as unknown as Record<string, ErrorClass>

describe("error classes", () => {
  it.each(table)("%s is %s, HTTP %d, on the class, its schema and its instances", (tag, code, status) => {
    const Class = classes[tag]!
    expect(Class.code).toBe(code)
    expect(Class.status).toBe(status)
    expect(Class.ast.annotations?.httpApiStatus).toBe(status)
    const error = Class.withMessage("what happened")
    expect(error._tag).toBe(tag)
    expect(error).toBeInstanceOf(Error)
    expect(Schema.encodeSync(Class)(error)).toEqual({ error: { code, message: "what happened" } })
    expect(() => Schema.decodeUnknownSync(Class)({ error: { code: `${code}_other`, message: "m" } })).toThrow()
  })

  it("the table above is every error class the module exports", () => {
    const exported = Object.entries(Errors)
      .filter(([, v]) => typeof v === "function" && "withMessage" in v)
      .map(([k]) => k)
    expect(exported.sort()).toEqual(table.map(([tag]) => tag).sort())
  })

  it("withMessage adds details and message_id only when given", () => {
    const details = [{ field: "to", message: "must be a Malagasy mobile number" }]
    expect(
      JSON.parse(JSON.stringify(Errors.ValidationError.withMessage("bad", { details, messageId: "m-1" })))
    ).toEqual({
      error: { code: "validation_error", message: "bad", details },
      message_id: "m-1"
    })
    expect(Object.keys(Errors.ProviderRejected.withMessage("no", { messageId: "m-2" })).sort()).toEqual([
      "error",
      "message_id"
    ])
    expect(Object.keys(Errors.ValidationError.withMessage("bad", { details }).error).sort()).toEqual([
      "code",
      "details",
      "message"
    ])
    expect(Object.keys(Errors.NotFound.withMessage("none").error).sort()).toEqual(["code", "message"])
    expect(Object.keys(Errors.NotFound.withMessage("none")).sort()).toEqual(["error"])
  })

  it("encodes details field by field (the wire body of a validation error)", () => {
    const details = [{ field: "to", message: "must be a Malagasy mobile number" }]
    expect(
      Schema.encodeSync(Errors.ValidationError)(
        Errors.ValidationError.withMessage("bad", { details, messageId: "m-1" })
      )
    ).toEqual({
      error: { code: "validation_error", message: "bad", details },
      message_id: "m-1"
    })
    expect(() =>
      Schema.decodeUnknownSync(Errors.ValidationError)({
        error: { code: "validation_error", message: "m", details: [{ field: 1 }] }
      })
    ).toThrow()
  })

  it("errorBody writes the same body without a schema", () => {
    expect(errorBodyKeys(Errors.errorBody("not_found", "none"))).toEqual({ top: ["error"], error: ["code", "message"] })
    expect(
      Errors.errorBody("validation_error", "bad", { details: [{ field: "f", message: "m" }], messageId: "x" })
    ).toEqual({
      error: { code: "validation_error", message: "bad", details: [{ field: "f", message: "m" }] },
      message_id: "x"
    })
  })

  it("CommonErrors are the ten any endpoint may answer", () => {
    expect(Errors.CommonErrors.map((c) => c.code)).toEqual([
      "validation_error",
      "parse_error",
      "invalid_api_key",
      "not_found",
      "method_not_allowed",
      "not_acceptable",
      "payload_too_large",
      "unsupported_media_type",
      "internal_error",
      "service_unavailable"
    ])
  })
})

const errorBodyKeys = (body: { error: object }) => ({
  top: Object.keys(body).sort(),
  error: Object.keys(body.error).sort()
})
