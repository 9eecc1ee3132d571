/** Batch page cursors (src/batches/Cursor.ts): tied to their batch and position, signed, canonical. */
import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { decodeCursor, encodeCursor } from "../../src/batches/Cursor.ts"

const sign = (data: string) => createHmac("sha256", "test secret").update(data, "utf8").digest("base64url")
const secret = { sign }
const batch = "0b9e3a52-3c1e-4f5c-9a57-1f2e3d4c5b6a"
const otherBatch = "1c8f4b63-4d2f-4a6d-8b68-2a3f4e5d6c7b"
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64url")

describe("batch cursors", () => {
  it("are the position's payload and its signature, kept apart from other signatures by a `cursor` prefix", () => {
    expect(encodeCursor(secret, batch, 42)).toBe(`${b64(`${batch}:42`)}.${sign(`cursor\n${batch}:42`)}`)
  })

  it.each([0, 1, 42, 9999])("decode back to position %d of their own batch", (position) => {
    expect(decodeCursor(secret, batch, encodeCursor(secret, batch, position))).toBe(position)
  })

  it("are refused for another batch, even when signed for it", () => {
    expect(decodeCursor(secret, otherBatch, encodeCursor(secret, batch, 3))).toBeUndefined()
    // a payload naming the other batch, with this batch's signature
    expect(decodeCursor(secret, batch, `${b64(`${otherBatch}:3`)}.${sign(`cursor\n${batch}:3`)}`)).toBeUndefined()
  })

  it("are refused when forged: another position, another key, no prefix, a changed signature", () => {
    const forgedPosition = `${b64(`${batch}:7`)}.${encodeCursor(secret, batch, 3).split(".")[1]}`
    expect(decodeCursor(secret, batch, forgedPosition)).toBeUndefined()
    const otherKey = { sign: (d: string) => createHmac("sha256", "other").update(d, "utf8").digest("base64url") }
    expect(decodeCursor(secret, batch, encodeCursor(otherKey, batch, 3))).toBeUndefined()
    expect(decodeCursor(secret, batch, `${b64(`${batch}:3`)}.${sign(`${batch}:3`)}`)).toBeUndefined()
    const good = encodeCursor(secret, batch, 3)
    const last = good.at(-1) === "A" ? "B" : "A"
    expect(decodeCursor(secret, batch, `${good.slice(0, -1)}${last}`)).toBeUndefined()
  })

  it.each([
    ["empty", ""],
    ["no signature", b64(`${batch}:3`)],
    ["three parts", `${b64(`${batch}:3`)}.${sign(`cursor\n${batch}:3`)}.x`],
    ["a position of five digits", `${b64(`${batch}:10000`)}.${sign(`cursor\n${batch}:10000`)}`],
    ["a negative position", `${b64(`${batch}:-1`)}.${sign(`cursor\n${batch}:-1`)}`],
    ["no position", `${b64(`${batch}:`)}.${sign(`cursor\n${batch}:`)}`],
    ["something after the position", `${b64(`${batch}:3x`)}.${sign(`cursor\n${batch}:3x`)}`],
    ["something before the batch", `${b64(`x${batch}:3`)}.${sign(`cursor\nx${batch}:3`)}`]
  ])("are refused with %s", (_name, cursor) => {
    expect(decodeCursor(secret, batch, cursor)).toBeUndefined()
  })

  it("are exactly what was issued: something before or after a signed payload is refused", () => {
    const signature = sign(`cursor\n${batch}:3`)
    expect(decodeCursor(secret, batch, `${b64(`x${batch}:3`)}.${signature}`)).toBeUndefined()
    expect(decodeCursor(secret, batch, `${b64(`${batch}:3x`)}.${signature}`)).toBeUndefined()
    expect(decodeCursor(secret, batch, `${b64(`${batch}:3`)}.${signature}`)).toBe(3)
  })

  it("are refused in a non-canonical base64url spelling of the same payload", () => {
    const good = encodeCursor(secret, batch, 3)
    const [encoded, signature] = good.split(".") as [string, string]
    // the last character carries stray bits: flipping them decodes to the same bytes
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    const index = alphabet.indexOf(encoded.at(-1)!)
    const spelling = `${encoded.slice(0, -1)}${alphabet[index ^ 1]}`
    expect(Buffer.from(spelling, "base64url").equals(Buffer.from(encoded, "base64url"))).toBe(true)
    expect(decodeCursor(secret, batch, `${spelling}.${signature}`)).toBeUndefined()
  })
})
