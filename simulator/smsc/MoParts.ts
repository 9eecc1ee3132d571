/**
 * A mobile-originated text as the `deliver_sm` user data an SMSC sends: one PDU when it fits,
 * else parts in one of the three forms a long message may take (a user data header with an 8-bit
 * or a 16-bit reference, or the SAR TLVs), or the whole text in one `message_payload`. The
 * service joins them whatever the form and order (src/domain/InboundParts.ts); the SMSC
 * simulator sends them, optionally shuffled and with a part repeated, and tests build them here.
 */
import { encodeSegments } from "../../src/domain/Segments.ts"

export type PartForm = "udh8" | "udh16" | "sar" | "payload"
export const partForms: ReadonlyArray<PartForm> = ["udh8", "udh16", "sar", "payload"]

/** The fields of one `deliver_sm` carrying (part of) a mobile-originated text. */
export interface MoPdu {
  readonly esm_class: number
  readonly data_coding: number
  readonly short_message: Uint8Array
  readonly message_payload?: Uint8Array
  readonly sar_msg_ref_num?: number
  readonly sar_total_segments?: number
  readonly sar_segment_seqnum?: number
}

const ESM_CLASS_UDH = 0x40

const concat = (arrays: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0))
  let at = 0
  for (const a of arrays) {
    out.set(a, at)
    at += a.length
  }
  return out
}

/** The PDUs of `text` in `form`, in order; `ref` tells the parts of one message apart (0 to 65535; 0 to 255 for udh8). */
export const moPdus = (text: string, form: PartForm, ref: number): ReadonlyArray<MoPdu> => {
  const { encoding, segments } = encodeSegments(text)
  const data_coding = encoding === "GSM-7" ? 0 : 8
  if (form === "payload") {
    return [{ esm_class: 0, data_coding, short_message: new Uint8Array(0), message_payload: concat(segments) }]
  }
  if (segments.length === 1) return [{ esm_class: 0, data_coding, short_message: segments[0]! }]
  const total = segments.length
  return segments.map((octets, i): MoPdu => {
    switch (form) {
      case "udh8":
        return {
          esm_class: ESM_CLASS_UDH,
          data_coding,
          short_message: concat([Uint8Array.of(0x05, 0x00, 0x03, ref & 0xff, total, i + 1), octets])
        }
      case "udh16":
        return {
          esm_class: ESM_CLASS_UDH,
          data_coding,
          short_message: concat([Uint8Array.of(0x06, 0x08, 0x04, (ref >> 8) & 0xff, ref & 0xff, total, i + 1), octets])
        }
      default:
        return {
          esm_class: 0,
          data_coding,
          short_message: octets,
          sar_msg_ref_num: ref & 0xffff,
          sar_total_segments: total,
          sar_segment_seqnum: i + 1
        }
    }
  })
}

/** `pdus` in an order drawn by `random` (0 <= x < 1), with the part at `repeat` (if any) sent twice. */
export const shuffled = <A>(pdus: ReadonlyArray<A>, random: () => number, repeat?: number): ReadonlyArray<A> => {
  const out = [...pdus]
  if (repeat !== undefined && out[repeat] !== undefined) out.push(out[repeat]!)
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}
