/**
 * A OneAPI route in a fleet (docs/operators.md#oneapi-routes): one process at a time sends for it,
 * the one holding its slot, so that its `mps` and its token are the fleet's. Two processes (each
 * a routed provider with a slot store of its own, on one database): one sends and asks for the
 * token; the other leaves the route's numbers to it (sendable), answers Unreachable without a
 * request if handed one anyway, and shows standby; when the first stops, the second takes over.
 */
import { expect } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { Provider } from "../../../src/provider/Provider.ts"
import { routedProviderLayer } from "../../../src/provider/RoutedProvider.ts"
import { BindSlotStore } from "../../../src/provider/smpp/BindSlots.ts"
import { eventuallyEffect } from "../../support/Eventually.ts"
import { backend, withApp } from "../../support/TestApp.ts"
import { scriptedProvider } from "../ScriptedProvider.ts"
import { testSettings } from "../smpp/support.ts"
import { fakeOneApiPerFile } from "./FakeOneApi.ts"
import { submission } from "./support.ts"

const fake = fakeOneApiPerFile()

const unsmpp = Layer.succeed(
  Provider,
  scriptedProvider(() => Effect.die("no SMSC in this file"))
)

/** One process's provider, over a slot store of its own, open until `scope` closes. */
const processIn = (scope: Scope.Scope, route: string) =>
  Effect.map(
    Layer.buildWithScope(
      routedProviderLayer(
        testSettings([], { oneapi: [fake().settings({ name: route, prefixes: ["+26132"] })] }),
        "http://sms.test",
        unsmpp
      ).pipe(Layer.provide(BindSlotStore.layer)),
      scope
    ),
    (context) => Context.get(context, Provider)
  )

withApp({ label: "oneapi_fleet" })(`a OneAPI route in a fleet (${backend})`, (it) => {
  it.effect("one process sends for it; the other leaves it, sends nothing, and takes over when the first stops", () =>
    Effect.gen(function* () {
      const route = `fleet-${Date.now()}`
      const scopeA = yield* Scope.make()
      const a = yield* processIn(scopeA, route)
      const b = yield* processIn(yield* Effect.scope, route)

      expect(a.sendable()).toEqual({ _tag: "All" })
      expect(b.sendable()).toEqual({ _tag: "ByPrefix", prefixes: [{ prefix: "+26132", held: false }] })
      const [healthB] = yield* b.health
      expect(healthB).toMatchObject({ connected: false, slot: { held: null, of: 1 } })
      expect(healthB?.detail).toContain("standby")

      expect((yield* a.submit(submission()))._tag).toBe("Accepted")
      const refused = yield* b.submit(submission())
      expect(refused).toEqual({ _tag: "Unreachable", reason: `${route}: another process of the fleet sends for it` })
      expect(fake().sends).toHaveLength(1)
      // only the sender asked for a token
      expect(fake().tokenRequests).toHaveLength(1)

      yield* Scope.close(scopeA, Exit.void)
      yield* eventuallyEffect(
        Effect.sync(() => b.sendable()._tag),
        (tag) => tag === "All",
        { timeoutMs: 8000, what: "b holds the route's slot" }
      )
      expect((yield* b.submit(submission()))._tag).toBe("Accepted")
      expect(fake().sends).toHaveLength(2)
    }).pipe(Effect.scoped)
  )
})
