/** Results.ts alone: where a 201's provider id comes from, and the answers the fake's table does not cover. */
import { describe, expect, it } from "vitest"
import { retryAfterMs, type SendAnswer, sendOutcome } from "../../../src/provider/oneapi/Results.ts"

const id = "01a24ca5-e8c9-75df-a60e-f289c984b915"
const answer = (
  status: number,
  body: unknown,
  headers: { location?: string; retryAfter?: string } = {}
): SendAnswer => ({
  status,
  location: headers.location ?? null,
  retryAfter: headers.retryAfter ?? null,
  body: typeof body === "string" ? body : JSON.stringify(body)
})
const outcome = (a: SendAnswer) => sendOutcome("orange", id, a, 0)

describe("a 201's provider id", () => {
  it.each([
    [
      "resourceReference.resourceURL",
      { resourceReference: { resourceURL: "https://api/x/requests/r1" } },
      {},
      "orange:r1"
    ],
    [
      "outboundSMSMessageRequest.resourceURL when there is no resourceReference",
      { outboundSMSMessageRequest: { resourceURL: "https://api/x/requests/r2/" } },
      {},
      "orange:r2"
    ],
    ["the Location header when the body names none", {}, { location: "https://api/x/requests/r3?v=1" }, "orange:r3"],
    ["percent-decoded", { resourceReference: { resourceURL: "https://api/x/requests/a%3Ab" } }, {}, "orange:a:b"]
  ])("comes from %s", (_from, body, headers, ref) => {
    expect(outcome(answer(201, body, headers))).toEqual({ _tag: "Accepted", providerRef: ref })
  })

  it("none readable is unknown", () => {
    expect(outcome(answer(201, { resourceReference: {} }))._tag).toBe("Unknown")
    expect(outcome(answer(201, { resourceReference: { resourceURL: "https://api/x/requests/ a b" } }))._tag).toBe(
      "Unknown"
    )
  })
})

describe("answers beside the table", () => {
  it("a 409 SVC0005 that names its resource keeps that id", () => {
    const body = {
      requestError: { serviceException: { messageId: "SVC0005", text: "dup" } },
      resourceReference: { resourceURL: "https://api/x/requests/r9" }
    }
    expect(outcome(answer(409, body))).toEqual({ _tag: "Accepted", providerRef: "orange:r9" })
  })

  it("a 409 of another exception, a 400 without an exception and a 404 without a body are unknown", () => {
    expect(outcome(answer(409, { requestError: { serviceException: { messageId: "SVC0001", text: "x" } } }))._tag).toBe(
      "Unknown"
    )
    expect(outcome(answer(400, { error: "bad" }))._tag).toBe("Unknown")
    expect(outcome(answer(404, ""))._tag).toBe("Unknown")
  })

  it("a 401 asks for a new token and a 429 for a retry, with its Retry-After", () => {
    expect(outcome(answer(401, ""))).toEqual({ _tag: "Unauthorized" })
    expect(outcome(answer(429, "", { retryAfter: "3" }))).toEqual({ _tag: "Throttled", retryAfterMs: 3000 })
    expect(outcome(answer(429, ""))).toEqual({ _tag: "Throttled", retryAfterMs: undefined })
  })

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(retryAfterMs("Thu, 01 Jan 1970 00:00:05 GMT", 1000)).toBe(4000)
    expect(retryAfterMs("soon", 0)).toBeUndefined()
  })
})
