/**
 * SMPP and OneAPI routes behind one Provider (RoutedProvider.ts, docs/decisions.md#oneapi): a
 * number goes to the route of its longest prefix whatever its kind, a query to the route its ref
 * names, and /ready's health lists both kinds (a OneAPI route connected from its start, its
 * token asked for then).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { Provider } from "../../../src/provider/Provider.ts"
import { routedProviderLayer } from "../../../src/provider/RoutedProvider.ts"
import { smppProviderLayer } from "../../../src/provider/smpp/SmppProvider.ts"
import { FakeInbox, routeTo, startSmsc, submission, testSettings, until } from "../smpp/support.ts"
import { eventuallyEffect } from "../../support/Eventually.ts"
import { FakeOneApi, requestError } from "./FakeOneApi.ts"

let smsc: Smsc
let fake: FakeOneApi

beforeAll(async () => {
  smsc = await startSmsc()
  fake = await FakeOneApi.start()
})
beforeEach(() => fake.reset())
afterAll(async () => {
  await fake?.close()
  await smsc?.dispose()
})

const withRouted = <A>(verifyByCorrelator: boolean, body: (provider: typeof Provider.Service) => Effect.Effect<A>) => {
  const settings = testSettings([routeTo(smsc, { name: "telma", prefixes: ["+26134", "*"] })], {
    oneapi: [fake.settings({ prefixes: ["+26132", "+261341"], verifyByCorrelator })]
  })
  const inbox = new FakeInbox()
  return Effect.gen(function* () {
    return yield* body(yield* Provider)
  }).pipe(
    Effect.provide(
      routedProviderLayer(settings, "http://sms.test", smppProviderLayer(settings)).pipe(Layer.provide(inbox.layer))
    )
  )
}

describe("SMPP and OneAPI routes behind one provider", () => {
  it.live("routes each number by its longest prefix across both kinds", () =>
    withRouted(false, (provider) =>
      Effect.gen(function* () {
        yield* until("telma bound", () => smsc.binds > 0)
        // the OneAPI route asked for its token at start: ready before its first send
        const orange = Effect.map(provider.health, (all) => all.find((h) => h.route === "orange"))
        const atStart = yield* eventuallyEffect(orange, (h) => h?.connected === true, { what: "orange connected" })
        expect(atStart?.detail).toMatch(/^token valid until /)
        expect(fake.tokenRequests).toHaveLength(1)
        const receivedBefore = smsc.received.length
        expect(provider.routeOf("+261320000001")).toBe("orange")
        expect(provider.routeOf("+261341000001")).toBe("orange")
        expect(provider.routeOf("+261340000001")).toBe("telma")
        expect(provider.routeOf("+261330000001")).toBe("telma")
        const toOrange = yield* provider.submit(submission("+261341000001"))
        const toTelma = yield* provider.submit(submission("+261340000001"))
        expect(toOrange).toEqual({ _tag: "Accepted", providerRef: "orange:req-1" })
        expect(toTelma._tag).toBe("Accepted")
        expect(toTelma._tag === "Accepted" && toTelma.providerRef.startsWith("telma:")).toBe(true)
        expect(fake.sends).toHaveLength(1)
        expect(smsc.received.length - receivedBefore).toBe(1)
        const health = yield* provider.health
        expect(health.map((h) => [h.route, h.connected])).toEqual([
          ["telma", true],
          ["orange", true]
        ])
        // OneAPI routes bind nothing: every process may send to them
        expect(provider.sendable()).toEqual({ _tag: "All" })
      })
    )
  )

  it.live("asks the OneAPI route its ref names about an unknown message, never the SMSC", () =>
    withRouted(true, (provider) =>
      Effect.gen(function* () {
        fake.onSend = () => requestError(400, "serviceException", "SVC0002", "Invalid input value")
        const s = submission("+261320000009")
        const result = yield* provider.query({ ...s, providerRef: null })
        expect(result).toEqual({ _tag: "NotReceived", reason: "orange refused it: SVC0002 Invalid input value" })
        expect(fake.sends).toHaveLength(1)
      })
    )
  )
})
