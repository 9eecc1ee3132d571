/** The syntax of recipients, sender names, stored text and ids (docs/integrators.md#phone-numbers). */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Permissions, PermissionSchema } from "../../src/domain/Permissions.ts"
import { maskPhone, PhoneNumber, phonePattern } from "../../src/domain/Phone.ts"
import { isValidSenderName, SenderName } from "../../src/domain/SenderName.ts"
import { isStorableText, Text, TextWith, unstorableTextMessage } from "../../src/domain/Text.ts"
import { isUuid } from "../../src/domain/Uuid.ts"

describe("Malagasy mobile numbers", () => {
  it.each(["+261341234567", "+261320000000", "+261399999999"])("accept %s", (n) => {
    expect(phonePattern.test(n)).toBe(true)
    expect(Schema.decodeUnknownSync(PhoneNumber)(n)).toBe(n)
  })

  it.each([
    "261341234567",
    "+261241234567",
    "+26134123456",
    "+2613412345678",
    "+26134123456a",
    " +261341234567",
    "+261341234567 ",
    "+33612345678",
    "x+261341234567",
    "+2613a1234567"
  ])("refuse %j with a plain message", (n) => {
    expect(phonePattern.test(n)).toBe(false)
    expect(() => Schema.decodeUnknownSync(PhoneNumber)(n)).toThrow(
      /must be a Malagasy mobile number: \+2613 followed by 8 digits/
    )
  })

  it("are documented with a description and an example", () => {
    expect(Schema.toJsonSchemaDocument(PhoneNumber).schema).toMatchObject({
      type: "string",
      description: "Malagasy mobile number in E.164 form",
      examples: ["+261340000001"]
    })
  })

  it("mask all but the operator prefix and the last two digits", () => {
    expect(maskPhone("+261341234567")).toBe("+26134*****67")
    expect(maskPhone("+2613412")).toBe("+2613412")
    expect(maskPhone("+261341")).toBe("***")
    expect(maskPhone("+26134")).toBe("***")
    expect(maskPhone("")).toBe("***")
  })
})

describe("sender names", () => {
  it.each(["A", "INFO", "a1", "Shop 24", "A B C", "ABCDEFGHIJK", "12345678901"])("accept %j", (name) => {
    expect(isValidSenderName(name)).toBe(true)
    expect(Schema.decodeUnknownSync(SenderName)(name)).toBe(name)
  })

  it.each(["", " ", " A", "A ", "ABCDEFGHIJKL", "A_B", "Élan", "A-B", "A\tB", "AB\n"])(
    "refuse %j with a plain message",
    (name) => {
      expect(isValidSenderName(name)).toBe(false)
      expect(() => Schema.decodeUnknownSync(SenderName)(name)).toThrow(
        /must be 1 to 11 ASCII letters, digits or internal spaces/
      )
    }
  )
})

describe("storable text", () => {
  it.each(["", "Salama", "😀 paired surrogates", "\ud800\udc00", "tab\tand\nnew line"])("accepts %j", (s) => {
    expect(isStorableText(s)).toBe(true)
    expect(Schema.decodeUnknownSync(Text)(s)).toBe(s)
  })

  it.each([
    ["a NUL", "a\u0000b"],
    ["a lone high surrogate at the end", "a\ud800"],
    ["a high surrogate before a non-low unit", "\ud800a"],
    ["a high surrogate before another high one", "\udbff\udbff\udc00"],
    ["a lone low surrogate at the start", "\udc00a"],
    ["a low surrogate after a non-high unit", "a\udfff"],
    ["two low surrogates after a high one", "\ud800\udc00\udc00"]
  ])("refuses %s", (_name, s) => {
    expect(isStorableText(s)).toBe(false)
    expect(() => Schema.decodeUnknownSync(Text)(s)).toThrow(unstorableTextMessage)
  })

  it("says what is wrong in a plain message", () => {
    expect(unstorableTextMessage).toBe("must not contain NUL characters or unpaired UTF-16 surrogates")
  })

  it("keeps the annotations of a field built with TextWith or annotated after the check, and refuses what Text refuses", () => {
    expect(Schema.toJsonSchemaDocument(Text.annotate({ description: "annotated after" })).schema).toEqual({
      type: "string",
      description: "annotated after"
    })
    const Field = TextWith({ description: "a described field", format: "email" })
    expect(Schema.toJsonSchemaDocument(Field).schema).toEqual({
      type: "string",
      description: "a described field",
      format: "email"
    })
    expect(Schema.toJsonSchemaDocument(Text).schema).toEqual({ type: "string" })
    expect(() => Schema.decodeUnknownSync(Field)("a\u0000")).toThrow(unstorableTextMessage)
  })
})

describe("uuids", () => {
  const id = "0b9e3a52-3c1e-4f5c-9a57-1f2e3d4c5b6a"
  it("accepts lower and upper case", () => {
    expect(isUuid(id)).toBe(true)
    expect(isUuid(id.toUpperCase())).toBe(true)
  })

  it("refuses each group one digit short, one digit long or with a non-hex digit, and anything around it", () => {
    const groups = id.split("-")
    for (let g = 0; g < groups.length; g++) {
      const with_ = (group: string) => groups.map((x, i) => (i === g ? group : x)).join("-")
      expect(isUuid(with_(groups[g]!.slice(1))), `group ${g} short`).toBe(false)
      expect(isUuid(with_(`${groups[g]}a`)), `group ${g} long`).toBe(false)
      expect(isUuid(with_(`g${groups[g]!.slice(1)}`)), `group ${g} non-hex`).toBe(false)
    }
    expect(isUuid(`x${id}`)).toBe(false)
    expect(isUuid(`${id}x`)).toBe(false)
    expect(isUuid(id.replaceAll("-", ""))).toBe(false)
  })
})

describe("permissions", () => {
  it("are the five of docs/integrators.md#authentication, webhooks.manage (docs/decisions.md#webhooks) and inbound.read (docs/two-way.md)", () => {
    expect([...Permissions]).toEqual([
      "sms.send",
      "sms.schedule",
      "delivery.read",
      "balance.read",
      "contacts.manage",
      "webhooks.manage",
      "inbound.read"
    ])
    for (const p of Permissions) expect(Schema.is(PermissionSchema)(p)).toBe(true)
    expect(Schema.is(PermissionSchema)("sms.admin")).toBe(false)
  })
})
