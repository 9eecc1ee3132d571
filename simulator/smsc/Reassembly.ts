/** Concatenated short messages put back together: the parts of one message share a reference in their user data header. */

/** The concatenation element of a user data header (IEI 0x00, 8-bit reference, or 0x08, 16-bit). */
export interface Concatenation {
  readonly ref: number
  readonly total: number
  /** From 1. */
  readonly seq: number
}

/** The concatenation element among a header's information elements, if any. */
export const concatenationOf = (elements: ReadonlyArray<Buffer> | undefined): Concatenation | undefined => {
  for (const e of elements ?? []) {
    if (e[0] === 0x00 && e[1] === 3) return { ref: e[2]!, total: e[3]!, seq: e[4]! }
    if (e[0] === 0x08 && e[1] === 4) return { ref: (e[2]! << 8) | e[3]!, total: e[4]!, seq: e[5]! }
  }
  return undefined
}

/** Messages still missing parts, by key; the oldest is forgotten beyond `keptMax` so a part that never comes costs nothing for good. */
export class Reassembly<P> {
  private readonly pending = new Map<string, Array<P | undefined>>()
  private readonly keptMax: number

  constructor(keptMax: number) {
    this.keptMax = keptMax
  }

  /** Adds part `c.seq` of the message `key`; returns every part in order once the last one came. */
  add(key: string, c: Concatenation, part: P): ReadonlyArray<P> | undefined {
    let parts = this.pending.get(key)
    if (parts === undefined) {
      parts = new Array<P | undefined>(c.total).fill(undefined)
      this.pending.set(key, parts)
      if (this.pending.size > this.keptMax) this.pending.delete(this.pending.keys().next().value!)
    }
    parts[c.seq - 1] = part
    if (parts.some((p) => p === undefined)) return undefined
    this.pending.delete(key)
    return parts as ReadonlyArray<P>
  }
}
