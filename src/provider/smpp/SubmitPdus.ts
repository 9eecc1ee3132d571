/**
 * A submission as SMPP 3.4 `submit_sm` PDUs (docs/decisions.md#smpp): source = the sender name
 * (TON 5 NPI 0 when alphanumeric, TON 1 NPI 1 when a number), destination = the number without
 * `+` (TON 1 NPI 1), a receipt asked for, data_coding 0 (GSM 7-bit, one septet per octet) or 8
 * (UCS-2), and a text of several segments as a concatenated message (esm_class 0x40, UDH
 * `05 00 03 <ref> <total> <n>`) cut exactly where the segment count cuts it.
 */
import type smpp from "smpp"
import { encodeSegments } from "../../domain/Segments.ts"
import type { Submission } from "../Provider.ts"

export interface Address {
  readonly ton: number
  readonly npi: number
  readonly addr: string
}

const TON_INTERNATIONAL = 1
const TON_ALPHANUMERIC = 5
const NPI_ISDN = 1
const NPI_UNKNOWN = 0

const ESM_CLASS_UDH = 0x40
const REGISTERED_DELIVERY_FINAL = 1
const DATA_CODING_GSM7 = 0
const DATA_CODING_UCS2 = 8

/** The sender as an SMPP source address: a number (optionally with `+`) is international, anything else alphanumeric. */
export const sourceAddress = (senderName: string): Address =>
  /^\+?[0-9]+$/.test(senderName)
    ? { ton: TON_INTERNATIONAL, npi: NPI_ISDN, addr: senderName.replace(/^\+/, "") }
    : { ton: TON_ALPHANUMERIC, npi: NPI_UNKNOWN, addr: senderName }

/** An E.164 number as an SMPP destination: international, ISDN, without its `+`. */
export const destinationAddress = (to: string): Address => ({
  ton: TON_INTERNATIONAL,
  npi: NPI_ISDN,
  addr: to.replace(/^\+/, "")
})

/** The `submit_sm` fields of each part of a submission, in order; `ref` (0 to 255) tells the parts of one message apart. */
export const submitSmParts = (s: Submission, ref: number): ReadonlyArray<smpp.PduOptions> => {
  const { encoding, segments } = encodeSegments(s.text)
  const source = sourceAddress(s.senderName)
  const destination = destinationAddress(s.to)
  const common: smpp.PduOptions = {
    source_addr_ton: source.ton,
    source_addr_npi: source.npi,
    source_addr: source.addr,
    dest_addr_ton: destination.ton,
    dest_addr_npi: destination.npi,
    destination_addr: destination.addr,
    registered_delivery: REGISTERED_DELIVERY_FINAL,
    data_coding: encoding === "GSM-7" ? DATA_CODING_GSM7 : DATA_CODING_UCS2
  }
  const octets = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (segments.length === 1) return [{ ...common, esm_class: 0, short_message: octets(segments[0]!) }]
  return segments.map((bytes, i) => ({
    ...common,
    esm_class: ESM_CLASS_UDH,
    short_message: Buffer.concat([Buffer.from([0x05, 0x00, 0x03, ref & 0xff, segments.length, i + 1]), bytes])
  }))
}

/** The `query_sm` fields asking about a message by its SMSC id and the sender it was sent with. */
export const querySmFields = (messageId: string, senderName: string): smpp.PduOptions => {
  const source = sourceAddress(senderName)
  return { message_id: messageId, source_addr_ton: source.ton, source_addr_npi: source.npi, source_addr: source.addr }
}
