/**
 * A delivery receipt as the SMSC simulator writes it: a `deliver_sm` (esm_class 0x04) from the
 * message's recipient to its sender, whose text gives the message's id, its dates and its final
 * `stat:`, with the `receipted_message_id` and `message_state` TLVs unless told otherwise; and
 * the SMPP message states a message goes through.
 */
import smpp from "smpp"
import type { MsgIdType } from "../../src/config/SmppSettings.ts"
import { receiptId } from "./IdFormats.ts"
import type { KnownMessage } from "./Entries.ts"

/** SMPP message_state: ENROUTE until its receipt, then DELIVERED or UNDELIVERABLE. */
export const messageState = { enroute: 1, delivered: 2, undeliverable: 5 } as const

/** `YYMMDDhhmm` in UTC, as receipts write their dates. */
const receiptDate = (d: Date): string =>
  d.toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d).*$/, "$1$2$3$4$5")

/** The receipt `word` of message `m`, its id written as `idFormat` says, with the TLVs when `tlvs`. */
export const receiptPdu = (
  m: KnownMessage,
  word: "DELIVRD" | "UNDELIV",
  idFormat: MsgIdType,
  tlvs: boolean
): smpp.PDU => {
  const id = receiptId(idFormat, m.ids[0]!)
  const delivered = word === "DELIVRD"
  const date = receiptDate(new Date())
  const text = `id:${id} sub:001 dlvrd:${delivered ? "001" : "000"} submit date:${date} done date:${date} stat:${word} err:${delivered ? "000" : "001"} text:`
  return new smpp.PDU("deliver_sm", {
    source_addr_ton: m.destTon,
    source_addr_npi: m.destNpi,
    source_addr: m.to.slice(1),
    dest_addr_ton: m.sourceTon,
    dest_addr_npi: m.sourceNpi,
    destination_addr: m.from,
    esm_class: 0x04,
    data_coding: 0,
    // letters, digits, spaces and colons are the same octets in ASCII and GSM 03.38
    short_message: Buffer.from(text, "ascii"),
    ...(tlvs ? { receipted_message_id: id, message_state: m.state } : {})
  })
}
