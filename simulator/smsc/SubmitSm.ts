/**
 * A `submit_sm` as the SMSC simulator reads it: its addresses (the recipient in E.164), flags and
 * data coding, this part's text decoded, and its place in a concatenated message (its UDH), if any.
 */
import type smpp from "smpp"
import { type Concatenation, concatenationOf } from "./Reassembly.ts"

/** One `submit_sm` as the simulator received it. */
export interface ReceivedSubmit {
  /** E.164, with `+`. */
  readonly to: string
  readonly from: string
  readonly sourceTon: number
  readonly sourceNpi: number
  readonly destTon: number
  readonly destNpi: number
  readonly esmClass: number
  readonly registeredDelivery: number
  readonly dataCoding: number
  /** This part's text, decoded by its data_coding (GSM 03.38 or UCS-2). */
  readonly text: string
  readonly concatenation: Concatenation | undefined
}

const e164 = (addr: string | undefined): string => `+${(addr ?? "").replace(/^\+/, "")}`

/** The `submit_sm` `pdu` as the simulator keeps it: addresses, flags, this part's text and its place in a concatenated message. */
export const readSubmit = (pdu: smpp.PDU): ReceivedSubmit => {
  const short = pdu.short_message
  const decoded = short === undefined || Buffer.isBuffer(short) ? { message: short ?? "" } : short
  const concatenation = Buffer.isBuffer(short) ? undefined : concatenationOf(decoded.udh)
  return {
    to: e164(pdu.destination_addr),
    from: pdu.source_addr ?? "",
    sourceTon: pdu.source_addr_ton ?? 0,
    sourceNpi: pdu.source_addr_npi ?? 0,
    destTon: pdu.dest_addr_ton ?? 0,
    destNpi: pdu.dest_addr_npi ?? 0,
    esmClass: pdu.esm_class ?? 0,
    registeredDelivery: pdu.registered_delivery ?? 0,
    dataCoding: pdu.data_coding ?? 0,
    text: typeof decoded.message === "string" ? decoded.message : decoded.message.toString("latin1"),
    concatenation:
      concatenation !== undefined && concatenation.seq >= 1 && concatenation.seq <= concatenation.total
        ? concatenation
        : undefined
  }
}
