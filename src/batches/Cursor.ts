/**
 * Opaque page cursors of a batch's message list: the last position shown, tied to its batch and
 * authenticated with the service secret, so a tampered cursor or one from another batch is refused.
 */
import type { ServiceSecret } from "../secrets/ServiceSecret.ts"

const payloadOf = (batchId: string, position: number) => `${batchId}:${position}`

/** A cursor for the page after `position` of batch `batchId`. */
export const encodeCursor = (secret: ServiceSecret["Service"], batchId: string, position: number): string => {
  const payload = payloadOf(batchId, position)
  // Stryker disable next-line StringLiteral: equivalent, UTF-8 is the default encoding of a string
  return `${Buffer.from(payload, "utf8").toString("base64url")}.${secret.sign(`cursor\n${payload}`)}`
}

/** The position a cursor continues after, or undefined when it is not a cursor of this batch. */
export const decodeCursor = (secret: ServiceSecret["Service"], batchId: string, cursor: string): number | undefined => {
  const [encoded, signature, ...rest] = cursor.split(".")
  if (
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, split gives a first part always, and a missing signature fails the comparison below
    encoded === undefined ||
    signature === undefined ||
    rest.length > 0
  )
    return undefined
  const payload = Buffer.from(encoded, "base64url").toString("utf8")
  // base64url decoding ignores stray bits of the last character: accept only the canonical encoding
  // Stryker disable next-line StringLiteral: equivalent, UTF-8 is the default encoding of a string
  if (Buffer.from(payload, "utf8").toString("base64url") !== encoded) return undefined
  const match = /^([0-9a-f-]{36}):(\d{1,4})$/.exec(payload)
  if (match === null || match[1] !== batchId) return undefined
  const position = Number(match[2])
  return secret.sign(`cursor\n${payloadOf(batchId, position)}`) === signature ? position : undefined
}
