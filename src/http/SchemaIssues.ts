/**
 * Schema failures as the spec's error bodies: a body that is not JSON is `parse_error`; every
 * other request failure is `validation_error` whose `details` name each bad or unknown field.
 */
import { SchemaIssue } from "effect"
import { type ErrorDetail, ParseError, ValidationError } from "../domain/Errors.ts"

export const notJsonMessage = "Expected a valid JSON body"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const friendly = (message: string): string => {
  if (message === "Missing key") return "is required"
  if (message === "Expected no excess property" || message.startsWith("Unexpected key")) return "is not a known field"
  return message
}

/** One detail per failing field, `field` being its dotted path (`recipients.3`), or `body` for the whole body; a field breaking several rules lists them in one message. */
export const issueDetails = (issue: SchemaIssue.Issue): ReadonlyArray<ErrorDetail> => {
  const byField = new Map<string, Array<string>>()
  for (const i of formatter(issue).issues) {
    const field = (i.path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p)).join(".") || "body"
    const messages = byField.get(field) ?? []
    const message = friendly(i.message)
    if (!messages.includes(message)) messages.push(message)
    byField.set(field, messages)
  }
  return [...byField].map(([field, messages]) => ({ field, message: messages.join("; ") }))
}

/** The error a failed payload decode answers with. */
export const payloadError = (issue: SchemaIssue.Issue): ValidationError | ParseError => {
  const details = issueDetails(issue)
  return details.length === 1 && details[0]!.message === notJsonMessage
    ? ParseError.withMessage("Request body is not valid JSON")
    : ValidationError.withMessage("Request body has invalid or unknown fields", { details })
}
