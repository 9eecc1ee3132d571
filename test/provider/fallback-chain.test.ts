/**
 * The chain of fallback routes (docs/operators.md#fallback-routes), on the routed provider alone:
 * SMPP entries `a` -> `b` -> OneAPI `c` -> back to `a`. Only "provably never taken" (Unreachable)
 * goes on; each route is tried once however the fallbacks loop; a refusal or an unknown ends the
 * chain where it happened; the deadline the caller waits for covers the longest chain.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import type { RouteSettings } from "../../src/config/SmppSettings.ts"
import { Provider, type SubmitResult } from "../../src/provider/Provider.ts"
import { routedProviderLayer } from "../../src/provider/RoutedProvider.ts"
import { fakeOneApiPerFile } from "./oneapi/FakeOneApi.ts"
import { submission } from "./oneapi/support.ts"
import { scriptedProvider } from "./ScriptedProvider.ts"
import { testSettings } from "./smpp/support.ts"

const fake = fakeOneApiPerFile()

const smppRoute = (name: string, prefix: string, fallback: string): RouteSettings => ({
  name,
  endpoint: { host: "127.0.0.1", port: 1, systemId: "x", password: Redacted.make("x") },
  prefixes: [prefix],
  window: 1,
  mps: 0,
  binds: 1,
  msgIdType: "exact",
  fallback
})

/** The SMPP adapter as a script: the routes it was asked to send through, each answered by `answer`. */
const scriptedSmpp = (asked: Array<string | undefined>, answer: (route: string | undefined) => SubmitResult) =>
  Layer.succeed(
    Provider,
    scriptedProvider((s) => Effect.sync(() => (asked.push(s.route), answer(s.route))))
  )

const unreachable = (route: string | undefined): SubmitResult => ({ _tag: "Unreachable", reason: `${route} is down` })

/** Sends one message to `to` through the routed provider over the script. */
const sendTo = (to: string, smpp: Layer.Layer<Provider>) =>
  Effect.gen(function* () {
    const settings = testSettings([smppRoute("a", "+26134", "b"), smppRoute("b", "+26133", "c")], {
      oneapi: [fake().settings({ name: "c", prefixes: ["+26132"], fallback: "a" })]
    })
    const provider = yield* Effect.provide(
      Effect.service(Provider),
      routedProviderLayer(settings, "http://sms.test", smpp)
    )
    return { result: yield* provider.submit(submission(to)), deadlineMs: provider.submitDeadlineMs }
  }).pipe(Effect.scoped)

describe("a chain of fallback routes", () => {
  it.live("tries each route once, in order, whatever loop the fallbacks make, and waits for the longest chain", () =>
    Effect.gen(function* () {
      fake().expiresIn = null
      const asked: Array<string | undefined> = []
      const { result, deadlineMs } = yield* sendTo("+261341234567", scriptedSmpp(asked, unreachable))
      expect(asked).toEqual(["a", "b"])
      expect(fake().sends).toHaveLength(0)
      expect(result._tag).toBe("Unreachable")
      expect(result._tag === "Unreachable" && result.reason).toBe(
        "a is down; then b is down; then c: token refused: 401"
      )
      // three routes of 1.5 s each
      expect(deadlineMs).toBe(4500)
    })
  )

  it.live("starts at the number's own route: c, then a, then b", () =>
    Effect.gen(function* () {
      fake().expiresIn = null
      const asked: Array<string | undefined> = []
      const { result } = yield* sendTo("+261321234567", scriptedSmpp(asked, unreachable))
      expect(asked).toEqual(["a", "b"])
      expect(result._tag === "Unreachable" && result.reason).toMatch(/^c: token refused: 401; then a is down; then b/)
    })
  )

  it.live("stops at the route that took it", () =>
    Effect.gen(function* () {
      const asked: Array<string | undefined> = []
      const { result } = yield* sendTo("+261341234567", scriptedSmpp(asked, unreachable))
      expect(asked).toEqual(["a", "b"])
      expect(result).toEqual({ _tag: "Accepted", providerRef: "c:req-1" })
    })
  )

  const ends: ReadonlyArray<[string, SubmitResult]> = [
    ["a refusal", { _tag: "Rejected", reason: "b refused it" }],
    ["an unknown (it may have been taken)", { _tag: "Unknown", reason: "b: no answer" }]
  ]
  for (const [what, answer] of ends)
    it.live(`ends with ${what} where it happened: no fallback after it`, () =>
      Effect.gen(function* () {
        const asked: Array<string | undefined> = []
        const { result } = yield* sendTo(
          "+261341234567",
          scriptedSmpp(asked, (route) => (route === "b" ? answer : unreachable(route)))
        )
        expect(asked).toEqual(["a", "b"])
        expect(result).toEqual(answer)
        expect(fake().sends).toHaveLength(0)
        expect(fake().tokenRequests.length).toBeLessThanOrEqual(1)
      })
    )
})
