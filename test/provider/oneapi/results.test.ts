/**
 * Each answer of a OneAPI provider to a send, and what the route makes of it
 * (docs/operators.md#oneapi-routes): the SubmitResult, and how many requests reached the fake
 * (a request is sent again only when it provably was not taken).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { SubmitResult } from "../../../src/provider/Provider.ts"
import { closedPort, created, fakeOneApiPerFile, requestError, type FakeReply } from "./FakeOneApi.ts"
import { makeRoute, send, submission } from "./support.ts"

const fake = fakeOneApiPerFile()

interface Row {
  readonly answers: string
  readonly script: (n: number) => FakeReply
  readonly result: SubmitResult["_tag"]
  /** The provider ref or reason, as a pattern. */
  readonly detail: RegExp
  /** Requests the fake saw: exactly, or at least (`min`). */
  readonly requests: number | { readonly min: number }
}

const rows: ReadonlyArray<Row> = [
  { answers: "201", script: created, result: "Accepted", detail: /^orange:req-1$/, requests: 1 },
  {
    answers: "400 policy exception",
    script: () => requestError(400, "policyException", "POL0001", "A policy error occurred"),
    result: "Rejected",
    detail: /^orange refused it: POL0001 A policy error occurred$/,
    requests: 1
  },
  {
    answers: "400 service exception",
    script: () => requestError(400, "serviceException", "SVC0004", "No valid addresses provided"),
    result: "Rejected",
    detail: /^orange refused it: SVC0004 No valid addresses provided$/,
    requests: 1
  },
  {
    answers: "409 SVC0005 (correlator already used)",
    script: () => requestError(409, "serviceException", "SVC0005", "Duplicate correlator"),
    result: "Accepted",
    detail: /^orange:c:[0-9a-f-]{36}$/,
    requests: 1
  },
  {
    answers: "429, then 201",
    script: (n) => (n === 1 ? { status: 429, headers: { "retry-after": "0" } } : created(n)),
    result: "Accepted",
    detail: /^orange:req-2$/,
    requests: 2
  },
  {
    answers: "429 until the deadline",
    script: () => ({ status: 429 }),
    result: "Unreachable",
    detail: /throttled it \(429\) until the response deadline/,
    requests: { min: 3 }
  },
  { answers: "500", script: () => ({ status: 500 }), result: "Unknown", detail: /answered 500/, requests: 1 },
  {
    answers: "201 with a body that is not JSON",
    script: () => ({ status: 201, body: "<html>ok</html>" }),
    result: "Unknown",
    detail: /201 with a body that is not JSON/,
    requests: 1
  },
  {
    answers: "the socket destroyed after the request was read",
    script: () => "destroy",
    result: "Unknown",
    detail: /connection lost after the request/,
    requests: 1
  },
  {
    answers: "no answer before the deadline",
    script: () => "hold",
    result: "Unknown",
    detail: /no answer within 1200 ms/,
    requests: 1
  }
]

const detailOf = (result: SubmitResult): string => (result._tag === "Accepted" ? result.providerRef : result.reason)

describe("a OneAPI route's result for each answer to a send", () => {
  it.live.each(rows)("$answers: $result", (row) =>
    Effect.gen(function* () {
      fake().onSend = (_r, n) => row.script(n)
      const route = yield* makeRoute(fake().settings())
      const s = submission()
      const result = yield* send(route, s)
      expect(result._tag, detailOf(result)).toBe(row.result)
      expect(detailOf(result)).toMatch(row.detail)
      if (typeof row.requests === "number") expect(fake().sends).toHaveLength(row.requests)
      else expect(fake().sends.length).toBeGreaterThanOrEqual(row.requests.min)
      // every request the fake saw was this message's, under one correlator
      expect(new Set(fake().sends.map((r) => r.json.outboundSMSMessageRequest.clientCorrelator))).toEqual(
        new Set([s.messageId])
      )
    })
  )

  it.live("a connection refused before anything is written: tried again until the deadline, then Unreachable", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(closedPort)
      const route = yield* makeRoute(fake().settings({ baseUrl: `http://127.0.0.1:${port}` }))
      const started = Date.now()
      const result = yield* send(route, submission())
      expect(result._tag).toBe("Unreachable")
      expect(detailOf(result)).toMatch(/ECONNREFUSED/)
      // given up with a quarter of the deadline left, not at once
      expect(Date.now() - started).toBeGreaterThanOrEqual(300)
      expect(fake().sends).toHaveLength(0)
      expect(route.health.connected).toBe(false)
    })
  )

  it.live("a name not found (DNS) before anything is written: tried again until the deadline, then Unreachable", () =>
    Effect.gen(function* () {
      // `.invalid` never resolves (RFC 2606); a machine without DNS fails it as EAI_AGAIN
      const route = yield* makeRoute(fake().settings({ baseUrl: "http://sms-provider.invalid" }))
      const started = Date.now()
      const result = yield* send(route, submission())
      expect(result._tag).toBe("Unreachable")
      expect(detailOf(result)).toMatch(/ENOTFOUND|EAI_AGAIN/)
      expect(Date.now() - started).toBeGreaterThanOrEqual(300)
      expect(fake().sends).toHaveLength(0)
    })
  )

  it.live(
    "the request is the one the docs describe: path, bearer token, body, notify URL with the entry's secret",
    () =>
      Effect.gen(function* () {
        const route = yield* makeRoute(fake().settings())
        const s = submission("+261321234567")
        yield* send(route, s)
        expect(fake().sends).toHaveLength(1)
        const request = fake().sends[0]!
        expect(request.path).toBe("/smsmessaging/v1/outbound/tel%3A%2B2610000/requests")
        expect(request.headers.authorization).toBe("Bearer tok-1")
        const { receiptRequest, ...rest } = request.json.outboundSMSMessageRequest
        expect(rest).toEqual({
          address: ["tel:+261321234567"],
          senderAddress: "tel:+2610000",
          senderName: "Shop",
          outboundSMSTextMessage: { message: "Salama!" },
          clientCorrelator: s.messageId
        })
        expect(receiptRequest.callbackData).toBe(s.messageId)
        expect(receiptRequest.notifyURL).toMatch(
          /^http:\/\/sms\.example\/providers\/orange\/receipts\/[A-Za-z0-9_-]{32}$/
        )
        expect(receiptRequest.notifyURL).not.toContain("client-secret")
        const [token] = fake().tokenRequests
        expect(token?.headers.authorization).toBe(`Basic ${Buffer.from("client:client-secret").toString("base64")}`)
        expect(token?.text).toBe("grant_type=client_credentials")
      })
  )

  it.live("a refused token: nothing sent, Unreachable, and /ready's detail says so", () =>
    Effect.gen(function* () {
      fake().expiresIn = null
      const route = yield* makeRoute(fake().settings())
      const result = yield* send(route, submission())
      expect(result).toEqual({ _tag: "Unreachable", reason: "orange: token refused: 401" })
      expect(fake().sends).toHaveLength(0)
      expect(route.health).toEqual({
        route: "orange",
        connected: false,
        detail: "token refused: 401",
        slot: { held: 0, of: 1 }
      })
    })
  )

  it.live("connected once a token was obtained and the last send did not fail for transport", () =>
    Effect.gen(function* () {
      const route = yield* makeRoute(fake().settings())
      expect(route.health.connected).toBe(false)
      yield* send(route, submission())
      expect(route.health.connected).toBe(true)
      expect(route.health.detail).toMatch(/^token valid until \d{4}-\d\d-\d\dT/)
      fake().onSend = () => "destroy"
      yield* send(route, submission())
      expect(route.health.connected).toBe(false)
      fake().onSend = (_r, n) => created(n)
      yield* send(route, submission())
      expect(route.health.connected).toBe(true)
    })
  )

  it.live("stays connected when its token merely expired: the next send asks for another", () =>
    Effect.gen(function* () {
      // valid 60 s: inside the 60 s margin at once
      fake().expiresIn = 60
      const route = yield* makeRoute(fake().settings())
      yield* send(route, submission())
      expect(route.health.connected).toBe(true)
      expect(route.health.detail).toMatch(/^token expired at \d{4}-.*; a new one at the next send$/)
      fake().expiresIn = null
      yield* send(route, submission())
      expect(route.health).toEqual({
        route: "orange",
        connected: false,
        detail: "token refused: 401",
        slot: { held: 0, of: 1 }
      })
    })
  )
})
