/**
 * `oneapi` entries of SMS_PROVIDERS_FILE beside SMPP ones (docs/operators.md#oneapi-routes): a
 * mixed file, each bad field one line naming the entry and the field (the client secret never
 * echoed), prefixes unique across both kinds, `fallback` naming another entry (never with
 * `verify_by_correlator`); and SMS_PUBLIC_URL.
 */
import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { publicUrlOf } from "../../../src/config/Config.ts"
import { decodeSmppSettings } from "../../../src/config/SmppConfig.ts"
import type { SmppSettings } from "../../../src/config/SmppSettings.ts"
import { decodeEnv, readEnv } from "../../support/ConfigEnv.ts"

const path = "/etc/sms/providers.json"
const decode = (entries: unknown, env: Record<string, string> = {}) =>
  readEnv(
    decodeSmppSettings("smpp", () => JSON.stringify(entries)),
    { SMS_PROVIDERS_FILE: path, ...env }
  )
const settingsOf = (decoded: ReturnType<typeof decode>): SmppSettings =>
  decoded.ok && decoded.value !== undefined ? decoded.value : expect.fail(JSON.stringify(decoded))
const errorsOf = (decoded: ReturnType<typeof decode>): ReadonlyArray<string> =>
  decoded.ok ? expect.fail("decoded") : decoded.errors

const orange = {
  type: "oneapi",
  name: "orange",
  base_url: "https://api.orange.example/",
  token_url: "https://api.orange.example/oauth/v3/token",
  client_id: "our-client",
  client_secret: "Or-s3cret",
  sender_address: "tel:+2610000",
  prefixes: ["+26132", "+26137"]
}
const telma = { name: "telma", smpp_url: "smpp://aggregator:Tl-pass@smsc.telma.example:2775", prefixes: ["+26134"] }

describe("oneapi entries in the routing file", () => {
  it("reads a mixed file: SMPP entries (type absent or smpp) and oneapi ones with their defaults", () => {
    const s = settingsOf(
      decode(
        [
          telma,
          orange,
          { ...telma, type: "smpp", name: "airtel", prefixes: ["+26133"] },
          {
            ...orange,
            name: "orange-backup",
            prefixes: ["+261320"],
            mps: 40,
            fallback: "orange"
          },
          { ...orange, name: "orange-verified", prefixes: ["+261321"], verify_by_correlator: true }
        ],
        { SMS_SMPP_MPS: "25" }
      )
    )
    expect(s.routes.map((r) => r.name)).toEqual(["telma", "airtel"])
    const [first, second, third] = s.oneapi ?? []
    expect(first && { ...first, clientSecret: Redacted.value(first.clientSecret) }).toEqual({
      name: "orange",
      baseUrl: "https://api.orange.example",
      tokenUrl: "https://api.orange.example/oauth/v3/token",
      clientId: "our-client",
      clientSecret: "Or-s3cret",
      senderAddress: "tel:+2610000",
      prefixes: ["+26132", "+26137"],
      mps: 25,
      verifyByCorrelator: false,
      fallback: undefined
    })
    expect(second).toMatchObject({ name: "orange-backup", mps: 40, verifyByCorrelator: false, fallback: "orange" })
    expect(third).toMatchObject({ name: "orange-verified", verifyByCorrelator: true, fallback: undefined })
    expect(String(first?.clientSecret)).not.toContain("Or-s3cret")
  })

  it.each<[string, Record<string, unknown>, string]>([
    ["base_url", { base_url: "ftp://api.example" }, "base_url: must be an http:// or https:// URL"],
    ["token_url", { token_url: "https://u:p@api.example/token" }, "token_url: must be an http:// or https:// URL"],
    ["client_id", { client_id: "" }, "client_id: must not be empty"],
    ["client_secret", { client_secret: 12345 }, "client_secret: must be a non-empty string"],
    ["sender_address", { sender_address: "+2610000" }, 'sender_address: must be "tel:+" followed by digits'],
    ["prefixes", { prefixes: ["26132"] }, 'prefixes.0: must be "*" or "+" followed by digits'],
    ["mps", { mps: 100_001 }, "mps: expected a value between 0 and 100000"],
    ["verify_by_correlator", { verify_by_correlator: "yes" }, "verify_by_correlator: expected boolean"],
    ["fallback (itself)", { fallback: "orange" }, "fallback: must name another entry, not itself"],
    ["fallback (no such entry)", { fallback: "airtel" }, "fallback: names no entry of the file (airtel)"],
    [
      "fallback (with verify_by_correlator)",
      { fallback: "telma", verify_by_correlator: true },
      "fallback: cannot be combined with verify_by_correlator"
    ],
    ["an unknown field", { smpp_url: "smpp://u:p@h" }, "smpp_url: is not a known field"]
  ])("refuses a bad %s in one line naming the entry and the field", (_field, change, line) => {
    const errors = errorsOf(decode([telma, { ...orange, ...change }]))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain(`SMS_PROVIDERS_FILE (${path}): entry 2 (orange) ${line}`)
    for (const error of errors) expect(error).not.toContain("Or-s3cret")
  })

  it("reads an SMSC's fallback, and refuses one naming no entry or itself", () => {
    const s = settingsOf(decode([{ ...telma, fallback: "orange" }, orange]))
    expect(s.routes[0]?.fallback).toBe("orange")
    expect(errorsOf(decode([{ ...telma, fallback: "telma" }, orange]))).toEqual([
      `SMS_PROVIDERS_FILE (${path}): entry 1 (telma) fallback: must name another entry, not itself`
    ])
    expect(errorsOf(decode([{ ...telma, fallback: "airtel" }]))).toEqual([
      `SMS_PROVIDERS_FILE (${path}): entry 1 (telma) fallback: names no entry of the file (airtel)`
    ])
  })

  it("names a missing field, the client secret included, without any secret", () => {
    const { client_secret: _, ...noSecret } = orange
    expect(errorsOf(decode([{ ...noSecret, client_id: "x" }]))).toEqual([
      `SMS_PROVIDERS_FILE (${path}): entry 1 (orange) client_secret: is required`
    ])
  })

  it("keeps prefixes unique across both kinds of entry", () => {
    expect(errorsOf(decode([telma, { ...orange, prefixes: ["+26132", "+26134"] }]))).toEqual([
      `SMS_PROVIDERS_FILE (${path}): entry 2 (orange) prefixes: +26134 is already served by telma`
    ])
  })

  it("refuses a name used by an entry of the other kind", () => {
    expect(errorsOf(decode([telma, { ...orange, name: "telma" }]))).toEqual([
      `SMS_PROVIDERS_FILE (${path}): entry 2 (telma) name: already used by another entry`
    ])
  })
})

describe("SMS_PUBLIC_URL", () => {
  it("defaults to the service on the loopback at PORT", () => {
    const decoded = decodeEnv({ PORT: "9090" })
    expect(decoded.ok && publicUrlOf(decoded.config)).toBe("http://127.0.0.1:9090")
  })

  it("is read without its trailing slash", () => {
    const decoded = decodeEnv({ SMS_PUBLIC_URL: "https://sms.example.mg/" })
    expect(decoded.ok && publicUrlOf(decoded.config)).toBe("https://sms.example.mg")
  })

  it("refuses what is no http(s) base URL in one line", () => {
    const decoded = decodeEnv({ SMS_PUBLIC_URL: "sms.example.mg" })
    expect(decoded.ok ? [] : decoded.errors).toEqual([
      'SMS_PUBLIC_URL must be an http:// or https:// base URL without credentials or query (got "sms.example.mg")'
    ])
  })
})
