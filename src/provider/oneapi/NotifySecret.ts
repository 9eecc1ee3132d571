/**
 * The secret path segment of a OneAPI route's notify URLs (docs/operators.md#oneapi-routes):
 * base64url(HMAC-SHA256(key = the entry's client secret, "notify:" + entry name)), its first 32
 * characters. Only whoever knows the client secret (the provider, given the URL) can post there.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Redacted } from "effect"

export const notifySecretLength = 32

/** The notify secret of the entry `name`. */
export const notifySecret = (name: string, clientSecret: Redacted.Redacted<string>): string =>
  createHmac("sha256", Redacted.value(clientSecret))
    .update(`notify:${name}`)
    .digest("base64url")
    .slice(0, notifySecretLength)

/** Whether `given` is `expected`, compared in constant time (lengths differ: not equal, told at once). */
export const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}
