/**
 * SMSC message ids as the service keeps them. A provider ref is `<route>:<id>`, the id
 * normalised by the route's `msg_id_type` so that the id of a `submit_sm_resp` and the id of
 * its receipt are equal strings: `exact` keeps ids as written; the two mixed kinds keep the
 * number in decimal without leading zeros (an id that is not a number in the expected base is
 * kept as written, so it still matches itself).
 */
import type { MsgIdType } from "../../config/SmppSettings.ts"

/** SMPP 3.4 writes a message_id as a C-string of at most 65 octets: here 1 to 65 visible ASCII characters. */
const messageIdPattern = /^[\x21-\x7e]{1,65}$/

/** Whether an SMSC's message id may be kept (and reach the database): 1 to 65 visible ASCII characters. */
export const isValidMessageId = (id: string | undefined): id is string => id !== undefined && messageIdPattern.test(id)

/** A field from the SMSC quoted for a log line: its first 40 characters, control characters escaped. */
export const printable = (value: string): string => JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)

const hexDigits = /^[0-9a-f]+$/i
const decimalDigits = /^[0-9]+$/

const fromHex = (raw: string): string => (hexDigits.test(raw) ? BigInt(`0x${raw}`).toString(10) : raw)
const fromDecimal = (raw: string): string => (decimalDigits.test(raw) ? BigInt(raw).toString(10) : raw)

/** The id of a `submit_sm_resp`, normalised. */
export const idFromResponse = (type: MsgIdType, raw: string): string =>
  type === "exact" ? raw : type === "hex_resp_dec_receipt" ? fromHex(raw) : fromDecimal(raw)

/** The id of a receipt, normalised. */
export const idFromReceipt = (type: MsgIdType, raw: string): string =>
  type === "exact" ? raw : type === "hex_resp_dec_receipt" ? fromDecimal(raw) : fromHex(raw)

/** A normalised id written back the way the SMSC wrote it in `submit_sm_resp` (hexadecimal in upper case), for `query_sm`. */
export const idForQuery = (type: MsgIdType, id: string): string =>
  type === "hex_resp_dec_receipt" && decimalDigits.test(id) ? BigInt(id).toString(16).toUpperCase() : id

/** `<route>:<id>`. */
export const providerRef = (route: string, id: string): string => `${route}:${id}`

/** The route and id of a provider ref, or undefined when it is not one (route names hold no `:`). */
export const parseProviderRef = (ref: string): { readonly route: string; readonly id: string } | undefined => {
  const colon = ref.indexOf(":")
  return colon <= 0 ? undefined : { route: ref.slice(0, colon), id: ref.slice(colon + 1) }
}
