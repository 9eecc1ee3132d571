/**
 * A OneAPI route's access token (docs/operators.md#oneapi-routes): kept until 60 s before it
 * expires, one request at a time shared by concurrent sends, renewed once on a 401 (the send
 * tried again once), and a 401 with the new token too ends the send Unreachable.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { fakeOneApiPerFile } from "./FakeOneApi.ts"
import { makeRoute, send, submission } from "./support.ts"

const fake = fakeOneApiPerFile()

describe("a OneAPI route's token", () => {
  it.live("is asked for once by concurrent first sends, then kept while valid", () =>
    Effect.gen(function* () {
      const route = yield* makeRoute(fake().settings())
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, () => submission()),
        (s) => send(route, s),
        { concurrency: "unbounded" }
      )
      expect(results.every((r) => r._tag === "Accepted")).toBe(true)
      yield* send(route, submission())
      expect(fake().tokenRequests).toHaveLength(1)
      expect(new Set(fake().sends.map((r) => r.token))).toEqual(new Set(["tok-1"]))
    })
  )

  it.live("is asked for again when it expires within the 60 s margin", () =>
    Effect.gen(function* () {
      // valid 60 s: always inside the margin, so never kept
      fake().expiresIn = 60
      const route = yield* makeRoute(fake().settings())
      yield* send(route, submission())
      yield* send(route, submission())
      expect(fake().tokenRequests).toHaveLength(2)
      expect(fake().sends.map((r) => r.token)).toEqual(["tok-1", "tok-2"])
    })
  )

  it.live("that expires under load: every concurrent send refused for it is sent again once, after one renewal", () =>
    Effect.gen(function* () {
      const route = yield* makeRoute(fake().settings())
      yield* send(route, submission())
      // the provider forgets tok-1 while twenty sends use it
      fake().revoked.add("tok-1")
      const batch = Array.from({ length: 20 }, () => submission())
      const results = yield* Effect.forEach(batch, (s) => send(route, s), { concurrency: "unbounded" })
      expect(results.map((r) => r._tag)).toEqual(batch.map(() => "Accepted"))
      expect(fake().tokenRequests).toHaveLength(2)
      expect(route.tokenFetches).toBe(2)
      // each message at most twice: once refused with tok-1, once taken with tok-2
      const perMessage = new Map<string, Array<string>>()
      for (const r of fake().sends.slice(1)) {
        const id: string = r.json.outboundSMSMessageRequest.clientCorrelator
        perMessage.set(id, [...(perMessage.get(id) ?? []), r.token ?? ""])
      }
      expect(perMessage.size).toBe(20)
      for (const tokens of perMessage.values()) expect(tokens).toEqual(["tok-1", "tok-2"])
    })
  )

  it.live("refused with the new token too: Unreachable (a 401 takes nothing), sent twice only", () =>
    Effect.gen(function* () {
      fake().revoked.add("tok-1")
      fake().revoked.add("tok-2")
      const route = yield* makeRoute(fake().settings())
      const result = yield* send(route, submission())
      expect(result).toEqual({ _tag: "Unreachable", reason: "orange: answered 401 with a new token" })
      expect(fake().sends).toHaveLength(2)
      expect(fake().tokenRequests).toHaveLength(2)
    })
  )

  it.live("not given before the deadline: Unreachable, nothing sent; the next send asks again", () =>
    Effect.gen(function* () {
      fake().tokenDelayMs = 1500
      const route = yield* makeRoute(fake().settings())
      const result = yield* send(route, submission())
      // the token request's own timeout is the deadline: whichever ends first says so
      expect(result._tag).toBe("Unreachable")
      expect(result._tag === "Unreachable" && result.reason).toMatch(
        /^orange: (no token before the deadline|token request failed: TimeoutError)/
      )
      expect(fake().sends).toHaveLength(0)
      fake().tokenDelayMs = 0
      // the send's deadline and the token request's timeout end together; a send made before that
      // request has ended would share it (and its timeout): let it end first
      yield* Effect.sleep("500 millis")
      expect((yield* send(route, submission()))._tag).toBe("Accepted")
      expect(fake().tokenRequests).toHaveLength(2)
    })
  )
})
