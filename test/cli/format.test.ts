import { describe, expect, it } from "vitest"
import { send } from "../../src/admin/cli/client.ts"
import { balanceLine, formatApiError, formatSuccess, table } from "../../src/admin/cli/format.ts"

const settings = { url: "http://sms.test", token: "t", json: false }

describe("sms-admin readable output", () => {
  it("aligns values two spaces after the longest label", () => {
    expect(table([["a", "1"], ["longer", "2"], ["empty", ""]])).toBe("a       1\nlonger  2\nempty\n")
  })

  it("writes a balance on one line", () => {
    expect(balanceLine({ total: 1000, reserved: 0, available: 1000, valid_until: null })).toBe(
      "total 1000  reserved 0  available 1000  valid until -"
    )
  })

  it("puts a new API key first, with its only-once note", () => {
    const text = formatSuccess(
      { name: "key create", orgId: "o1", permissions: ["sms.send"] },
      { key_id: "k1", api_key: "sk_secret", permissions: ["sms.send"] }
    )
    expect(text).toBe(
      "API key: sk_secret\n\n" +
        "  This key is shown only once: store it now. It cannot be read again;\n" +
        "  if it is lost, revoke it and create a new one.\n\n" +
        "key id        k1\norganization  o1\npermissions   sms.send\n"
    )
  })

  it("shows a message in the spec's field order, erased fields marked", () => {
    const text = formatSuccess({ name: "message erase", orgId: "o1", messageId: "m1" }, {
      delivery_time: "2030-01-01T00:00:05Z",
      id: "m1",
      to: "",
      sender_name: "",
      status: "delivered",
      segments: 1,
      send_at: null,
      erased_at: "2030-01-02T00:00:00Z"
    })
    expect(text).toBe(
      "id             m1\nto             (erased)\nsender name    (erased)\nstatus         delivered\nsegments       1\n" +
        "send at        -\ndelivery time  2030-01-01T00:00:05Z\nerased at      2030-01-02T00:00:00Z\n"
    )
  })

  it("prints an error's code, message, details and message id", () => {
    expect(formatApiError({
      code: "validation_error",
      message: "Invalid request",
      details: [{ field: "amount", message: "must be at least 1" }, "odd"],
      messageId: "m1"
    })).toBe("error: validation_error: Invalid request\n  amount: must be at least 1\n  odd\n  message_id: m1\n")
  })

  it("describes answers that are not the spec's error body", async () => {
    const html = await send(settings, async () => new Response("<h1>Bad gateway</h1>", { status: 502, statusText: "Bad Gateway" }), {
      method: "GET",
      path: "/organizations/o1"
    })
    expect(html.kind === "api-error" && formatApiError(html.error)).toBe("error: http_502: HTTP 502 Bad Gateway: <h1>Bad gateway</h1>\n")
    const notJson = await send(settings, async () => new Response("hello", { status: 200 }), { method: "GET", path: "/x" })
    expect(notJson.kind === "api-error" && formatApiError(notJson.error)).toBe("error: http_200: answer is not JSON: hello\n")
  })

  it("sends the token, JSON headers and body to the route under /admin/v1", async () => {
    const seen: Array<{ url: string; init: RequestInit }> = []
    const outcome = await send(settings, async (url, init) => {
      seen.push({ url, init })
      return Response.json({ ok: true }, { status: 201 })
    }, { method: "POST", path: "/organizations", body: { name: "A" } })
    expect(outcome).toEqual({ kind: "ok", status: 201, body: { ok: true } })
    expect(seen[0]!.url).toBe("http://sms.test/admin/v1/organizations")
    expect(seen[0]!.init.method).toBe("POST")
    expect(seen[0]!.init.body).toBe("{\"name\":\"A\"}")
    expect(seen[0]!.init.headers).toEqual({ authorization: "Bearer t", accept: "application/json", "content-type": "application/json" })
  })

  it("reports a request that gets no answer in time as a network error", async () => {
    const outcome = await send(settings, (_url, init) =>
      new Promise((_resolve, reject) => {
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason))
      }), { method: "GET", path: "/organizations/o1" }, { timeoutMs: 20 })
    expect(outcome).toEqual({ kind: "network-error", url: "http://sms.test/admin/v1/organizations/o1", reason: "no answer in time" })
  })
})
