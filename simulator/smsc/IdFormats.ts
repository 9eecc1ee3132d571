/**
 * How the SMSC simulator writes the ids it gives (its `idFormat`, the `msg_id_type` the adapter
 * must be told): in `submit_sm_resp`, in receipts, and how `query_sm` reads them back.
 */
import type { MsgIdType } from "../../src/config/SmppSettings.ts"

/** An id as `submit_sm_resp` writes it: hexadecimal for `hex_resp_dec_receipt`, else decimal. */
export const responseId = (idFormat: MsgIdType, id: number): string =>
  idFormat === "hex_resp_dec_receipt" ? id.toString(16).toUpperCase() : String(id)

/** An id as a receipt writes it: hexadecimal for `dec_resp_hex_receipt`, else decimal. */
export const receiptId = (idFormat: MsgIdType, id: number): string =>
  idFormat === "dec_resp_hex_receipt" ? id.toString(16).toUpperCase() : String(id)

/** The id a `query_sm` names, written as `submit_sm_resp` writes it; NaN when it is no such id. */
export const queriedId = (idFormat: MsgIdType, raw: string): number => {
  const hex = idFormat === "hex_resp_dec_receipt"
  return (hex ? /^[0-9a-f]+$/i : /^[0-9]+$/).test(raw) ? Number.parseInt(raw, hex ? 16 : 10) : Number.NaN
}
