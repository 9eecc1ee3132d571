/** Canonical JSON, the body half of an idempotency fingerprint: equal requests, equal strings. */
import { describe, expect, it } from "vitest"
import { canonicalJson } from "../../src/domain/CanonicalJson.ts"

describe("canonicalJson", () => {
  it("sorts object keys at every depth and writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: true, y: null }], c: "x" } })).toBe(
      `{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}`
    )
  })

  it("gives one string for bodies that differ only in key order", () => {
    expect(canonicalJson({ to: "+261340000001", text: "Salama", sender_name: "INFO" })).toBe(
      canonicalJson({ sender_name: "INFO", text: "Salama", to: "+261340000001" })
    )
  })

  it("keeps array order (an array is not a set)", () => {
    expect(canonicalJson(["b", "a", 3])).toBe(`["b","a",3]`)
    expect(canonicalJson(["b", "a"])).not.toBe(canonicalJson(["a", "b"]))
  })

  it("writes scalars, empty containers and escapes as JSON does", () => {
    expect(canonicalJson(null)).toBe("null")
    expect(canonicalJson(undefined)).toBe("null")
    expect(canonicalJson('a"b\n')).toBe(`"a\\"b\\n"`)
    expect(canonicalJson(1.5)).toBe("1.5")
    expect(canonicalJson(false)).toBe("false")
    expect(canonicalJson({})).toBe("{}")
    expect(canonicalJson([])).toBe("[]")
    expect(canonicalJson({ 'k"ey': [] })).toBe(`{"k\\"ey":[]}`)
    expect(canonicalJson([null, {}])).toBe("[null,{}]")
  })

  it("tells apart bodies whose values differ in type", () => {
    expect(canonicalJson({ a: "1" })).not.toBe(canonicalJson({ a: 1 }))
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({ a: "null" }))
  })
})
