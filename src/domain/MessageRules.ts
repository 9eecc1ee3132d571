/**
 * The rules a message creation must meet beyond its JSON shape (docs/integrators.md#messages, docs/decisions.md#segments):
 * text of at most two segments, sender name syntax, `send_at` in the future with an offset.
 * Shared by single messages and batches.
 */
import { InvalidSchedule, InvalidSenderName, ValidationError } from "./Errors.ts"
import { countSegments, describeSegments, maxSegments } from "./Segments.ts"
import { checkSendAt, isFuture } from "./SendAt.ts"
import { isValidSenderName } from "./SenderName.ts"

export interface CheckedContent {
  readonly segments: number
  readonly sendAt: Date | null
}

export type ContentError = ValidationError | InvalidSenderName

/** Checks text, sender name and the syntax of send_at (its future is checked at admission: `requireFuture`). */
export const checkContent = (input: {
  readonly text: string
  readonly sender_name?: string
  readonly send_at?: string
}): CheckedContent | ContentError => {
  const count = countSegments(input.text)
  if (count.segments > maxSegments) {
    return ValidationError.withMessage("The text is longer than two SMS segments", {
      details: [{ field: "text", message: describeSegments(count) }]
    })
  }
  if (
    // Stryker disable next-line ConditionalExpression: equivalent, isValidSenderName(undefined) tests "undefined", a valid name
    input.sender_name !== undefined &&
    !isValidSenderName(input.sender_name)
  ) {
    return InvalidSenderName.withMessage("sender_name must be 1 to 11 ASCII letters, digits or internal spaces", {
      details: [{ field: "sender_name", message: "must be 1 to 11 ASCII letters, digits or internal spaces" }]
    })
  }
  if (input.send_at === undefined) return { segments: count.segments, sendAt: null }
  const when = checkSendAt(input.send_at)
  return when.ok
    ? { segments: count.segments, sendAt: when.at }
    : ValidationError.withMessage("send_at is not a valid timestamp", {
        details: [{ field: "send_at", message: when.message }]
      })
}

/** 400 invalid_schedule unless `sendAt` (when given) is after `now`. */
export const requireFuture = (sendAt: Date | null, now: Date): InvalidSchedule | undefined =>
  sendAt === null || isFuture(sendAt, now.getTime())
    ? undefined
    : InvalidSchedule.withMessage("send_at must be in the future", {
        details: [{ field: "send_at", message: "must be in the future" }]
      })

/** Spec 4.7.1: 1 to 128 visible ASCII characters. (`u`: lets the OpenAPI document carry the pattern.) */
export const idempotencyKeyPattern = /^[!-~]{1,128}$/u

/** Spec 2.4: recipients must be distinct; each repeat is named with the position it repeats (never removed). */
export const checkDistinctRecipients = (recipients: ReadonlyArray<string>): ValidationError | undefined => {
  const first = new Map<string, number>()
  const details: Array<{ readonly field: string; readonly message: string }> = []
  recipients.forEach((r, i) => {
    const seen = first.get(r)
    if (seen === undefined) first.set(r, i)
    else details.push({ field: `recipients.${i}`, message: `duplicate of recipients.${seen}` })
  })
  return details.length === 0
    ? undefined
    : ValidationError.withMessage("recipients must be distinct; duplicates are rejected, not removed", { details })
}
