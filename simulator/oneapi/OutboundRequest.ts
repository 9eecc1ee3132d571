/**
 * The reading of a OneAPI send request's body (docs/operators.md#the-oneapi-simulator):
 * `{"outboundSMSMessageRequest": {"address": ["tel:+261…"], "senderAddress": "tel:…",
 * "senderName"?, "outboundSMSTextMessage": {"message"}, "clientCorrelator",
 * "receiptRequest"?: {"notifyURL", "callbackData"?}}}`, or the name of its first part that does
 * not match, for the 400 SVC0002 that names it.
 */

/** A send request as the simulator reads it. */
export interface OutboundRequest {
  /** The object under `outboundSMSMessageRequest`, as sent (the 201 gives it back). */
  readonly raw: Readonly<Record<string, unknown>>
  /** The recipient as written, `tel:+261…`. */
  readonly address: string
  /** The recipient, E.164 with `+`. */
  readonly to: string
  readonly senderAddress: string
  readonly senderName: string | undefined
  readonly text: string
  readonly correlator: string
  /** Where and with what its receipts go; none asked, none sent. */
  readonly receiptRequest: { readonly notifyUrl: string; readonly callbackData: string | undefined } | undefined
}

const addressPattern = /^tel:\+[1-9]\d{6,14}$/
const senderAddressPattern = /^tel:\+?\d{1,15}$/

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const isHttpUrl = (v: unknown): v is string => {
  if (typeof v !== "string") return false
  try {
    const url = new URL(v)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

const decoded = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/** The request `body` (JSON text) sent to the path segment `pathSender` (URL-encoded), or the name of the part that does not match. */
export const outboundRequestOf = (body: string, pathSender: string): OutboundRequest | string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return "outboundSMSMessageRequest"
  }
  if (!isObject(parsed) || !isObject(parsed.outboundSMSMessageRequest)) return "outboundSMSMessageRequest"
  const r = parsed.outboundSMSMessageRequest
  const address = Array.isArray(r.address) && r.address.length === 1 ? r.address[0] : undefined
  if (typeof address !== "string" || !addressPattern.test(address)) return "address"
  if (typeof r.senderAddress !== "string" || !senderAddressPattern.test(r.senderAddress)) return "senderAddress"
  if (decoded(pathSender) !== r.senderAddress) return "senderAddress"
  if (r.senderName !== undefined && (typeof r.senderName !== "string" || !/^.{1,11}$/u.test(r.senderName)))
    return "senderName"
  if (!isObject(r.outboundSMSTextMessage)) return "outboundSMSTextMessage"
  const text = r.outboundSMSTextMessage.message
  if (typeof text !== "string" || text === "") return "message"
  if (typeof r.clientCorrelator !== "string" || r.clientCorrelator === "") return "clientCorrelator"
  let receiptRequest: OutboundRequest["receiptRequest"]
  if (r.receiptRequest !== undefined) {
    if (!isObject(r.receiptRequest)) return "receiptRequest"
    if (!isHttpUrl(r.receiptRequest.notifyURL)) return "notifyURL"
    const callbackData = r.receiptRequest.callbackData
    if (callbackData !== undefined && typeof callbackData !== "string") return "callbackData"
    receiptRequest = { notifyUrl: r.receiptRequest.notifyURL, callbackData }
  }
  return {
    raw: r,
    address,
    to: address.slice("tel:".length),
    senderAddress: r.senderAddress,
    senderName: r.senderName,
    text,
    correlator: r.clientCorrelator,
    receiptRequest
  }
}

/** The correlator and recipient of a body, as far as they can be read (for the record of a request refused). */
export const glimpse = (body: string | undefined): { correlator: string | undefined; to: string | undefined } => {
  try {
    const r = (JSON.parse(body ?? "") as { outboundSMSMessageRequest?: Record<string, unknown> })
      .outboundSMSMessageRequest
    const address = Array.isArray(r?.address) ? r.address[0] : undefined
    return {
      correlator: typeof r?.clientCorrelator === "string" ? r.clientCorrelator : undefined,
      to: typeof address === "string" ? address.replace(/^tel:/, "") : undefined
    }
  } catch {
    return { correlator: undefined, to: undefined }
  }
}
