/**
 * The parts of a long inbound message and how they are joined
 * (docs/two-way.md). A part says where it belongs in one of three
 * ways: a user data header with a concatenation element (IEI 0x00, 8-bit reference, or 0x08,
 * 16-bit), the SAR TLVs (`sar_msg_ref_num`, `sar_total_segments`, `sar_segment_seqnum`), or not
 * at all (the whole message, in `short_message` or in one `message_payload`). Parts arrive in any
 * order and a repeated part counts once. Pure.
 */

/** Where a part belongs: part `seq` (from 1) of `total` of the message with reference `ref`. */
export interface PartPosition {
  readonly ref: number
  readonly total: number
  readonly seq: number
}

/** One received part: its place (none for a whole message) and its user data without any header. */
export interface InboundPart {
  readonly position: PartPosition | undefined
  readonly octets: Uint8Array
}

/** The SAR TLVs as a deliver_sm carries them, when it does. */
export interface SarFields {
  readonly refNum?: number | undefined
  readonly totalSegments?: number | undefined
  readonly segmentSeqnum?: number | undefined
}

/** A position that can be one: 1 <= seq <= total <= 255. */
const valid = (p: PartPosition): PartPosition | undefined =>
  Number.isInteger(p.ref) && p.total >= 1 && p.total <= 255 && p.seq >= 1 && p.seq <= p.total ? p : undefined

/**
 * The user data header at the start of `userData` (UDHL, then information elements) split off:
 * its concatenation element, if any, and the rest. Undefined when the header runs past the data.
 */
export const splitHeader = (
  userData: Uint8Array
): { readonly position: PartPosition | undefined; readonly rest: Uint8Array } | undefined => {
  const length = userData[0]
  if (length === undefined || length + 1 > userData.length) return undefined
  let position: PartPosition | undefined
  for (let i = 1; i + 1 < length + 1; ) {
    const iei = userData[i]!
    const len = userData[i + 1]!
    if (i + 2 + len > length + 1) return undefined
    const e = userData.subarray(i + 2, i + 2 + len)
    if (iei === 0x00 && len === 3) position ??= valid({ ref: e[0]!, total: e[1]!, seq: e[2]! })
    if (iei === 0x08 && len === 4) position ??= valid({ ref: (e[0]! << 8) | e[1]!, total: e[2]!, seq: e[3]! })
    i += 2 + len
  }
  return { position, rest: userData.subarray(length + 1) }
}

/**
 * A received `deliver_sm`'s part: `shortMessage` with its header when `hasHeader` (esm_class
 * 0x40), the SAR TLVs, and `messagePayload` (used when `shortMessage` is empty). Undefined when
 * its header cannot be read.
 */
export const partOf = (input: {
  readonly hasHeader: boolean
  readonly shortMessage: Uint8Array
  readonly messagePayload?: Uint8Array | undefined
  readonly sar?: SarFields | undefined
}): InboundPart | undefined => {
  const data =
    input.shortMessage.length === 0 && input.messagePayload !== undefined ? input.messagePayload : input.shortMessage
  let position: PartPosition | undefined
  let octets = data
  if (input.hasHeader) {
    const split = splitHeader(data)
    if (split === undefined) return undefined
    position = split.position
    octets = split.rest
  }
  const sar = input.sar
  if (
    position === undefined &&
    sar?.refNum !== undefined &&
    sar.totalSegments !== undefined &&
    sar.segmentSeqnum !== undefined
  ) {
    position = valid({ ref: sar.refNum, total: sar.totalSegments, seq: sar.segmentSeqnum })
  }
  // a "part" 1 of 1 is the whole message
  if (position?.total === 1) position = undefined
  return { position, octets }
}

/** What the parts received of one message come to. */
export interface Joined {
  /** The octets of the parts in order, a missing part left out. */
  readonly octets: Uint8Array
  /** How many distinct parts it has. */
  readonly segments: number
  /** Whether every part from 1 to `total` is there. */
  readonly complete: boolean
}

/** Joins the parts of one message of `total` parts, in order of `seq`; a repeated part counts once (the first kept). */
export const joinParts = (
  total: number,
  parts: ReadonlyArray<{ readonly seq: number; readonly octets: Uint8Array }>
): Joined => {
  const bySeq = new Map<number, Uint8Array>()
  for (const p of parts) if (p.seq >= 1 && p.seq <= total && !bySeq.has(p.seq)) bySeq.set(p.seq, p.octets)
  const ordered = [...bySeq.entries()].sort(([a], [b]) => a - b).map(([, octets]) => octets)
  const octets = new Uint8Array(ordered.reduce((n, o) => n + o.length, 0))
  let at = 0
  for (const o of ordered) {
    octets.set(o, at)
    at += o.length
  }
  return { octets, segments: bySeq.size, complete: bySeq.size === total }
}

/** How long after its first part a message still missing parts is kept as it is, incomplete. */
export const reassemblyWindowMs = 10 * 60_000
