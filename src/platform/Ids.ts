/** Identifiers and secrets, through a service so tests can make them deterministic. */
import { Context, Effect, Layer } from "effect"
import { randomBytes, randomUUID } from "node:crypto"

export class Ids extends Context.Service<
  Ids,
  {
    /** A new random UUID (v4). */
    readonly uuid: Effect.Effect<string>
    /**
     * A new time-ordered UUID (v7, RFC 9562) of something made at `at`: its milliseconds, then a
     * 12-bit sequence that increases within a millisecond in this process (RFC 9562's method 3),
     * then 62 random bits. The ids of messages and batches, made from the instant stored as their
     * creation: each is written at the end of the indexes that lead with it, not at a random place
     * (a page split at a random place leaves two half-full pages), the ids of one batch's members
     * follow the order of its recipients, the ids of one month's messages fall in that month's
     * partition, and an organisation's messages in id order are in the order of their creation.
     */
    readonly timeOrdered: (at: Date) => Effect.Effect<string>
    /** `bytes` cryptographically random bytes, base64url-encoded. */
    readonly secret: (bytes: number) => Effect.Effect<string>
  }
>()("sms/Ids") {
  static readonly layer = Layer.sync(Ids, () => {
    const next = uuidV7Source()
    return Ids.of({
      uuid: Effect.sync(() => randomUUID()),
      timeOrdered: (at) => Effect.sync(() => next(at.getTime())),
      secret: (bytes) => Effect.sync(() => randomBytes(bytes).toString("base64url"))
    })
  })
}

/** Most ids of one millisecond before the sequence borrows the next one (12 bits). */
const sequenceMax = 0xfff

/**
 * UUIDv7s for the times given (ms since 1970), increasing even when the time stands still or
 * steps back: the sequence goes on, and past its 4,096 ids the time is taken one ms ahead.
 */
export const uuidV7Source = () => {
  let lastMs = -1
  let sequence = 0
  // random bytes drawn for 256 ids at a time (as randomUUID does), not one draw from the system per id
  let pool = Buffer.alloc(0)
  let offset = 0
  return (atMs: number): string => {
    if (offset === pool.length) [pool, offset] = [randomBytes(16 * 256), 0]
    const bytes = pool.subarray(offset, offset + 16)
    offset += 16
    if (atMs > lastMs) {
      lastMs = atMs
      // a random start, in the lower half so that the millisecond has room
      sequence = bytes.readUInt16BE(6) & 0x7ff
    } else if (sequence < sequenceMax) {
      sequence++
    } else {
      lastMs++
      sequence = 0
    }
    bytes.writeUIntBE(lastMs, 0, 6)
    bytes[6] = 0x70 | (sequence >> 8)
    bytes[7] = sequence & 0xff
    bytes[8] = 0x80 | (bytes[8]! & 0x3f)
    const hex = bytes.toString("hex")
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }
}
