/**
 * The fields every simulator's control route asks of an inbound message to send on demand
 * (docs/operators.md#sending-a-mobile-originated-message, docs/operators.md#the-oneapi-simulator):
 * `from` the mobile, `to` the number, short code or sender name it writes to, `text`. Each
 * simulator reads its own further fields beside them.
 */

/** Longest text accepted, in characters (a long MO has at most 255 parts; this keeps well below). */
const textMax = 2000
/** An E.164 number, a short code, or a sender name (up to 11 letters, digits and spaces, a letter among them). */
const recipientPattern = /^(?:\+[1-9]\d{6,14}|\d{3,8}|(?=[A-Za-z0-9 ]*[A-Za-z])[A-Za-z0-9 ]{1,11})$/

/** A request's body as an object with valid `from`, `to` and `text`, or why not. */
export const moFieldsOf = (
  body: unknown
):
  | { readonly b: Record<string, unknown>; readonly from: string; readonly to: string; readonly text: string }
  | string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "the body must be a JSON object"
  const b = body as Record<string, unknown>
  if (typeof b.from !== "string" || !/^\+[1-9]\d{6,14}$/.test(b.from))
    return "from: the mobile's number in E.164, with + (e.g. +261341234567)"
  if (typeof b.to !== "string" || !recipientPattern.test(b.to))
    return "to: an E.164 number, a short code of 3 to 8 digits, or a sender name of up to 11 letters and digits with a letter"
  if (typeof b.text !== "string" || b.text.length === 0 || b.text.length > textMax)
    return `text: from 1 to ${textMax} characters`
  return { b, from: b.from, to: b.to, text: b.text }
}
