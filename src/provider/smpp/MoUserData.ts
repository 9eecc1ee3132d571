/**
 * The user data of a mobile-originated `deliver_sm` or `data_sm` as the octets the SMSC sent
 * (docs/two-way.md). The `smpp` package decodes `short_message`
 * and `message_payload` by `data_coding` on reading, with its own idea of each coding (IA5 read as
 * GSM, an unknown coding as it comes): the service reads the octets itself (domain/DataCoding.ts),
 * so they are taken from the frame. PduSocket.ts keeps the frame of each request it decodes.
 */
import { partOf, type InboundPart } from "../../domain/InboundParts.ts"

const DATA_SM = 0x00000103
const TLV_MESSAGE_PAYLOAD = 0x0424
const ESM_CLASS_UDH = 0x40

/** The frames requests were decoded from, by their decoded PDU. */
export const framesOfPdus = new WeakMap<object, Buffer>()

/** `short_message` (none in a `data_sm`) and the `message_payload` TLV of a frame; undefined when it runs short. */
export const rawUserData = (
  frame: Buffer
): { readonly shortMessage: Uint8Array; readonly messagePayload: Uint8Array | undefined } | undefined => {
  let at = 16
  const cstring = () => {
    const end = frame.indexOf(0, at)
    if (end === -1) throw new RangeError("C-octet string without its end")
    at = end + 1
  }
  const octet = () => {
    if (at >= frame.length) throw new RangeError("frame too short")
    return frame[at++]!
  }
  try {
    const dataSm = frame.readUInt32BE(4) === DATA_SM
    cstring() // service_type
    octet()
    octet()
    cstring() // source
    octet()
    octet()
    cstring() // destination
    octet() // esm_class
    let shortMessage: Uint8Array = new Uint8Array(0)
    if (dataSm) {
      octet() // registered_delivery
      octet() // data_coding
    } else {
      octet() // protocol_id
      octet() // priority_flag
      cstring() // schedule_delivery_time
      cstring() // validity_period
      for (let i = 0; i < 4; i++) octet() // registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id
      const length = octet()
      if (at + length > frame.length) return undefined
      shortMessage = frame.subarray(at, at + length)
      at += length
    }
    let messagePayload: Uint8Array | undefined
    while (at + 4 <= frame.length) {
      const tag = frame.readUInt16BE(at)
      const length = frame.readUInt16BE(at + 2)
      at += 4
      if (at + length > frame.length) return undefined
      if (tag === TLV_MESSAGE_PAYLOAD) messagePayload = frame.subarray(at, at + length)
      at += length
    }
    return { shortMessage, messagePayload }
  } catch {
    return undefined
  }
}

/** The part a mobile-originated PDU carries, read from its frame; undefined when it cannot be read. */
export const moPartOf = (pdu: {
  readonly esm_class?: number | undefined
  readonly sar_msg_ref_num?: number | undefined
  readonly sar_total_segments?: number | undefined
  readonly sar_segment_seqnum?: number | undefined
}): InboundPart | undefined => {
  const frame = framesOfPdus.get(pdu)
  const raw = frame === undefined ? undefined : rawUserData(frame)
  if (raw === undefined) return undefined
  return partOf({
    hasHeader: ((pdu.esm_class ?? 0) & ESM_CLASS_UDH) !== 0,
    shortMessage: raw.shortMessage,
    messagePayload: raw.messagePayload,
    sar: { refNum: pdu.sar_msg_ref_num, totalSegments: pdu.sar_total_segments, segmentSeqnum: pdu.sar_segment_seqnum }
  })
}
