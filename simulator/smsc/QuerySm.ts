/**
 * The SMSC simulator's answer to a `query_sm`: the message's state when the id is one it gave
 * (and still knows, Book.ts), else 0x67 ESME_RQUERYFAIL.
 */
import type smpp from "smpp"
import type { MsgIdType } from "../../src/config/SmppSettings.ts"
import { Status } from "../../src/provider/smpp/Statuses.ts"
import { queriedId } from "./IdFormats.ts"
import type { KnownMessage } from "./Entries.ts"

/** The status and fields of the `query_sm_resp` to `pdu`, the messages found by `find`. */
export const queryAnswer = (
  pdu: smpp.PDU,
  idFormat: MsgIdType,
  find: (id: number) => KnownMessage | undefined
): { readonly status: number; readonly fields: smpp.PduOptions } => {
  const raw = pdu.message_id ?? ""
  const message = find(queriedId(idFormat, raw))
  if (message === undefined) return { status: Status.queryFailed, fields: {} }
  return {
    status: Status.ok,
    fields: { message_id: raw, final_date: "", message_state: message.state, error_code: 0 }
  }
}
