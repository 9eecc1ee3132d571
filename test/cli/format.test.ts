/** sms-admin's readable output (src/admin/cli/format.ts). */
import { describe, expect, it } from "vitest"
import * as Format from "../../src/admin/cli/format.ts"

describe("sms-admin readable output", () => {
  it("aligns values two spaces after the longest label", () => {
    expect(
      Format.table([
        ["a", "1"],
        ["longer", "2"],
        ["empty", ""]
      ])
    ).toBe("a       1\nlonger  2\nempty")
  })

  it("aligns columns under a header, and says (none) for no row", () => {
    expect(
      Format.columns(
        ["ID", "NAME"],
        [
          ["1", "Alpha"],
          ["22", "B"]
        ]
      )
    ).toBe("ID  NAME\n1   Alpha\n22  B")
    expect(Format.columns(["ID", "NAME"], [])).toBe("ID  NAME\n(none)")
  })

  it("writes a balance on one line", () => {
    expect(Format.balanceLine({ total: 1000, reserved: 0, available: 1000, valid_until: null })).toBe(
      "total 1000  reserved 0  available 1000  valid until -"
    )
  })

  it("puts a new API key first, with its only-once note", () => {
    expect(Format.issuedKey("o1", { key_id: "k1", api_key: "svc_sms_k1.secret", permissions: ["sms.send"] })).toBe(
      "API key: svc_sms_k1.secret\n\n" +
        "  This key is shown only once: store it now. It cannot be read again;\n" +
        "  if it is lost, revoke it and create a new one.\n\n" +
        "key id        k1\norganisation  o1\npermissions   sms.send"
    )
  })

  it("shows a message in the spec's field order, erased fields marked, then its timeline", () => {
    expect(
      Format.operatorMessage({
        id: "m1",
        org_id: "o1",
        to: "",
        sender_name: "",
        status: "delivered",
        segments: 1,
        send_at: null,
        delivery_time: "2030-01-01T00:00:05.000Z",
        timeline: [
          { from_status: null, to_status: "processing", source: "admission", at: "2030-01-01T00:00:00.000Z" },
          { from_status: "processing", to_status: "accepted", source: "provider", at: "2030-01-01T00:00:01.000Z" }
        ]
      })
    ).toBe(
      "organisation   o1\nid             m1\nto             (erased)\nsender name    (erased)\nstatus         delivered\n" +
        "segments       1\nsend at        -\ndelivery time  2030-01-01T00:00:05.000Z\n\ntimeline\n" +
        "  AT                        SOURCE     CHANGE\n" +
        "  2030-01-01T00:00:00.000Z  admission  (new) -> processing\n" +
        "  2030-01-01T00:00:01.000Z  provider   processing -> accepted"
    )
  })

  it("prints an error's code, message, details and message id", () => {
    expect(
      Format.apiError({
        error: {
          code: "validation_error",
          message: "Invalid request",
          details: [{ field: "amount", message: "must be at least 1" }]
        },
        message_id: "m1"
      })
    ).toBe("error: validation_error: Invalid request\n  amount: must be at least 1\n  message_id: m1")
  })
})
