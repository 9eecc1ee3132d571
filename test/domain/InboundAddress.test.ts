/**
 * The addresses of an inbound message (docs/two-way.md, "Ingest"): `source_addr` TON 1 becomes
 * `+<digits>`, TON 2 `+261<digits without a leading 0>`; `destination_addr` is kept as the number
 * or short code it names; the numbers an organisation receives on are short codes of 3 to 8
 * digits or E.164 numbers ("API", operator routes).
 */
import { describe, expect, it } from "vitest"
import { isInboundNumber, recipientOf, senderOf } from "../../src/domain/InboundAddress.ts"

describe("senderOf", () => {
  it("writes a TON 1 (international) sender as + and its digits", () => {
    expect(senderOf(1, "261340000010")).toBe("+261340000010")
    expect(senderOf(1, "+261340000010")).toBe("+261340000010")
    expect(senderOf(1, "33612345678")).toBe("+33612345678")
  })

  it("writes a TON 2 (national) sender as +261 and its digits, one leading 0 dropped", () => {
    expect(senderOf(2, "0340000010")).toBe("+261340000010")
    expect(senderOf(2, "340000010")).toBe("+261340000010")
    // only one 0 is the national prefix
    expect(senderOf(2, "00340000010")).toBe("+2610340000010")
    // a + before the digits is not one of them
    expect(senderOf(2, "+340000010")).toBe("+261340000010")
  })

  it("reads the digits without the spaces between or around them", () => {
    expect(senderOf(1, " +261 34 000 00 10 ")).toBe("+261340000010")
    expect(senderOf(1, "261\t34\t0000010")).toBe("+261340000010")
    expect(senderOf(2, "034 00 000 10")).toBe("+261340000010")
  })

  it("keeps a sender of any other type as it came, without spaces", () => {
    expect(senderOf(0, "0340000010")).toBe("0340000010")
    expect(senderOf(0, "261340000010")).toBe("261340000010")
    expect(senderOf(5, "+261340000010")).toBe("+261340000010")
    expect(senderOf(5, "TELMA")).toBe("TELMA")
    expect(senderOf(5, "Telma Info")).toBe("TelmaInfo")
  })

  it("keeps an address that is not all digits as it came, whatever its type", () => {
    expect(senderOf(1, "TELMA")).toBe("TELMA")
    expect(senderOf(2, "TELMA")).toBe("TELMA")
    expect(senderOf(1, "A261340000010")).toBe("A261340000010")
    expect(senderOf(1, "261340000010A")).toBe("261340000010A")
    expect(senderOf(2, "034000001O")).toBe("034000001O")
    // a + anywhere but first is not the international prefix
    expect(senderOf(1, "26+1340000010")).toBe("26+1340000010")
    expect(senderOf(1, "++261340000010")).toBe("++261340000010")
    expect(senderOf(1, "")).toBe("")
    expect(senderOf(1, "+")).toBe("+")
  })
})

describe("recipientOf", () => {
  it("keeps a short code of 3 to 8 digits as it is, unless its type is international", () => {
    expect(recipientOf(0, "4242")).toBe("4242")
    expect(recipientOf(2, "4242")).toBe("4242")
    expect(recipientOf(5, "4242")).toBe("4242")
    expect(recipientOf(2, "123")).toBe("123")
    expect(recipientOf(2, "12345678")).toBe("12345678")
    expect(recipientOf(2, "04242")).toBe("04242")
    expect(recipientOf(2, " 42 42 ")).toBe("4242")
    expect(recipientOf(1, "4242")).toBe("+4242")
    expect(recipientOf(1, "123")).toBe("+123")
  })

  it("writes an international number (TON 1, or written with +) as + and its digits", () => {
    expect(recipientOf(1, "261340000000")).toBe("+261340000000")
    expect(recipientOf(1, "+261340000000")).toBe("+261340000000")
    expect(recipientOf(1, " 261 34 000 00 00")).toBe("+261340000000")
    expect(recipientOf(0, "+261340000000")).toBe("+261340000000")
    expect(recipientOf(5, "+ 261 34 000 00 00")).toBe("+261340000000")
    // a national number written as E.164 names the same number
    expect(recipientOf(2, "+261340000000")).toBe("+261340000000")
    // with a +, a few digits are no short code
    expect(recipientOf(0, "+4242")).toBe("+4242")
  })

  it("writes a national number (TON 2) longer than a short code as +261 and its digits, one leading 0 dropped", () => {
    expect(recipientOf(2, "0340000000")).toBe("+261340000000")
    expect(recipientOf(2, "340000000")).toBe("+261340000000")
    expect(recipientOf(2, "034 00 000 00")).toBe("+261340000000")
    expect(recipientOf(2, "12")).toBe("+26112")
  })

  it("keeps a number of any other type as it came, without spaces", () => {
    expect(recipientOf(0, "261340000000")).toBe("261340000000")
    expect(recipientOf(0, "0340000000")).toBe("0340000000")
    expect(recipientOf(5, "034 00 000 00")).toBe("0340000000")
    expect(recipientOf(0, "12")).toBe("12")
  })

  it("keeps an address that is not all digits as it came, whatever its type", () => {
    expect(recipientOf(1, "PROMO")).toBe("PROMO")
    expect(recipientOf(2, "PROMO")).toBe("PROMO")
    expect(recipientOf(2, "PRO MO")).toBe("PROMO")
    expect(recipientOf(1, "A261340000000")).toBe("A261340000000")
    expect(recipientOf(1, "261340000000A")).toBe("261340000000A")
    expect(recipientOf(2, "A4242")).toBe("A4242")
    expect(recipientOf(1, "26+1340000000")).toBe("26+1340000000")
    expect(recipientOf(1, "")).toBe("")
  })
})

describe("isInboundNumber", () => {
  it("takes a short code of 3 to 8 digits", () => {
    expect(isInboundNumber("123")).toBe(true)
    expect(isInboundNumber("4242")).toBe(true)
    expect(isInboundNumber("12345678")).toBe(true)
    expect(isInboundNumber("12")).toBe(false)
    expect(isInboundNumber("123456789")).toBe(false)
  })

  it("takes an E.164 number: + then 7 to 15 digits, the first not 0", () => {
    expect(isInboundNumber("+261340000000")).toBe(true)
    expect(isInboundNumber("+1234567")).toBe(true)
    expect(isInboundNumber("+123456789012345")).toBe(true)
    expect(isInboundNumber("+123456")).toBe(false)
    expect(isInboundNumber("+1234567890123456")).toBe(false)
    expect(isInboundNumber("+0340000000")).toBe(false)
    expect(isInboundNumber("261340000000")).toBe(false)
  })

  it("refuses anything else", () => {
    expect(isInboundNumber("")).toBe(false)
    expect(isInboundNumber("PROMO")).toBe(false)
    expect(isInboundNumber(" 4242")).toBe(false)
    expect(isInboundNumber("4242 ")).toBe(false)
    expect(isInboundNumber("42 42")).toBe(false)
    expect(isInboundNumber("+261 34 000 00 00")).toBe(false)
  })
})
