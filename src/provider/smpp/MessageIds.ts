/**
 * SMSC message ids as the service keeps them. A provider ref is `<route>:<id>`, the id
 * normalised by the route's `msg_id_type` so that the id of a `submit_sm_resp` and the id of
 * its receipt are equal strings: `exact` keeps ids as written; the two mixed kinds keep the
 * number in decimal without leading zeros (an id that is not a number in the expected base is
 * kept as written, so it still matches itself).
 */
import type { MsgIdType } from "./SmppSettings.ts"

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
