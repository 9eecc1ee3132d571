/**
 * The rules a message creation must meet beyond its JSON shape (spec 2.3, 2.4, contract 6):
 * text of at most two segments, sender name syntax, `send_at` in the future with an offset.
 * Shared by single messages and batches.
 */
import { InvalidSchedule, InvalidSenderName, ValidationError } from "./Errors.ts"
import { countSegments, describeSegments, maxSegments } from "./Segments.ts"
import { checkSendAt } from "./SendAt.ts"
import { isValidSenderName } from "./SenderName.ts"

export interface CheckedContent {
  readonly segments: number
  readonly sendAt: Date | null
}

export type ContentError = ValidationError | InvalidSenderName | InvalidSchedule

/** Checks text, sender name and send_at against the clock reading `nowMs`. */
export const checkContent = (
  input: { readonly text: string; readonly sender_name?: string; readonly send_at?: string },
  nowMs: number
): CheckedContent | ContentError => {
  const count = countSegments(input.text)
  if (count.segments > maxSegments) {
    return ValidationError.withMessage("The text is longer than two SMS segments", {
      details: [{ field: "text", message: describeSegments(count) }]
    })
  }
  if (input.sender_name !== undefined && !isValidSenderName(input.sender_name)) {
    return InvalidSenderName.withMessage("sender_name must be 1 to 11 ASCII letters, digits or internal spaces", {
      details: [{ field: "sender_name", message: "must be 1 to 11 ASCII letters, digits or internal spaces" }]
    })
  }
  if (input.send_at === undefined) return { segments: count.segments, sendAt: null }
  const when = checkSendAt(input.send_at, nowMs)
  if (when.ok) return { segments: count.segments, sendAt: when.at }
  return when.problem === "format"
    ? ValidationError.withMessage("send_at is not a valid timestamp", { details: [{ field: "send_at", message: when.message }] })
    : InvalidSchedule.withMessage(when.message, { details: [{ field: "send_at", message: when.message }] })
}

/** Spec 4.7.1: 1 to 128 visible ASCII characters. */
export const idempotencyKeyPattern = /^[!-~]{1,128}$/
