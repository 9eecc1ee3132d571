/**
 * The provider over a routing file with both kinds of entry (docs/decisions.md#oneapi), or with
 * fallback routes (docs/operators.md#fallback-routes): each number goes to the route of its
 * longest matching prefix (Routing.ts), an SMPP route through the SMPP adapter
 * (smpp/SmppProvider.ts), a OneAPI route through its own (oneapi/OneApiRoute.ts). A message its
 * route provably never took (Unreachable) goes on to the route's `fallback`, and so on, never to
 * a route twice; any other answer ends the chain. A provider ref names its route, so a query goes
 * back to the route that gave it. A OneAPI route has one slot for the fleet, as an SMSC has its
 * `binds` (smpp/BindSlots.ts): only the process holding it sends for the route, so its `mps` and
 * its token are the fleet's; the others leave its numbers to that process.
 */
import { Clock, Context, Effect, Layer, Metric, Option } from "effect"
import type { SmppSettings } from "../config/SmppSettings.ts"
import { maskPhone } from "../domain/Phone.ts"
import { fallbacks } from "../observability/Metrics.ts"
import { OneApiRoute } from "./oneapi/OneApiRoute.ts"
import { canSend, Provider, type Query, type Sendable, type Submission, type SubmitResult } from "./Provider.ts"
import { makeRouter, prefixTable } from "./Routing.ts"
import { BindSlotStore, makeBindGate, openGate } from "./smpp/BindSlots.ts"

type Entry = {
  readonly name: string
  readonly prefixes: ReadonlyArray<string>
  readonly fallback: string | undefined
} & ({ readonly kind: "smpp" } | { readonly kind: "oneapi"; readonly route: OneApiRoute })

/** Whether a routing file needs this provider rather than the SMPP adapter alone. */
export const needsRouting = (settings: SmppSettings): boolean =>
  (settings.oneapi ?? []).length > 0 || settings.routes.some((r) => r.fallback !== undefined)

/** The entries a message of `first` may go through, in order: each the fallback of the one before, none twice. */
const chainFrom = (first: Entry, named: ReadonlyMap<string, Entry>): ReadonlyArray<Entry> => {
  const chain = [first]
  for (let next = named.get(first.fallback ?? ""); next !== undefined && !chain.includes(next); ) {
    chain.push(next)
    next = named.get(next.fallback ?? "")
  }
  return chain
}

/**
 * The provider over `settings`' SMPP routes (through `smpp`, the SMPP adapter's layer) and its
 * OneAPI routes, whose notify URLs start with `publicUrl`.
 */
export const routedProviderLayer = <E, R>(
  settings: SmppSettings,
  publicUrl: string,
  smpp: Layer.Layer<Provider, E, R>
): Layer.Layer<Provider, E, R> =>
  Layer.effect(
    Provider,
    Effect.gen(function* () {
      const clock = yield* Clock.Clock
      const inner = Context.get(yield* Layer.build(smpp), Provider)
      const hasSmpp = settings.routes.length > 0
      const slots = yield* Effect.serviceOption(BindSlotStore)
      const oneapi = (settings.oneapi ?? []).map(
        (r) =>
          new OneApiRoute(
            r,
            settings.responseTimeoutMs,
            settings.timing,
            clock,
            publicUrl,
            Option.match(slots, { onNone: () => openGate(1), onSome: (store) => makeBindGate(store, r.name, 1) })
          )
      )
      // each route's slot taken (or found held) before the provider serves, as the SMSCs' are
      yield* Effect.forEach(oneapi, (route) => route.gate.attempt, { concurrency: "unbounded", discard: true })
      for (const route of oneapi) yield* Effect.forkScoped(route.gate.run)
      yield* Effect.addFinalizer(() =>
        Effect.forEach(oneapi, (route) => route.gate.close, { concurrency: "unbounded", discard: true })
      )
      const entries: ReadonlyArray<Entry> = [
        ...settings.routes.map((r) => ({
          kind: "smpp" as const,
          name: r.name,
          prefixes: r.prefixes,
          fallback: r.fallback
        })),
        ...oneapi.map((route) => ({
          kind: "oneapi" as const,
          name: route.name,
          prefixes: route.prefixes,
          fallback: route.settings.fallback,
          route
        }))
      ]
      // each route asks for its token at start, without holding the start: /ready says at once whether the account works
      yield* Effect.forkScoped(Effect.forEach(oneapi, (route) => route.warmUp, { concurrency: "unbounded" }))
      const routeFor = makeRouter(entries)
      const named = new Map(entries.map((entry) => [entry.name, entry]))
      const chains = new Map(entries.map((entry) => [entry, chainFrom(entry, named)]))
      const oneapiNamed = new Map(oneapi.map((route) => [route.name, route]))

      /** One attempt on `entry`, with its own response deadline. */
      const submitTo = (entry: Entry, s: Submission) =>
        entry.kind === "smpp"
          ? inner.submit({ ...s, route: entry.name })
          : entry.route.submit(s, clock.currentTimeMillisUnsafe() + settings.responseTimeoutMs)

      const submit = Effect.fn("RoutedProvider.submit")(function* (s: Submission) {
        const own = routeFor(s.to)
        if (own === undefined)
          return { _tag: "Unreachable", reason: `no route: no entry serves ${maskPhone(s.to)}` } as const
        const reasons: Array<string> = []
        let previous: Entry | undefined
        for (const entry of chains.get(own)!) {
          if (previous !== undefined) yield* Metric.update(fallbacks({ from: previous.name, to: entry.name }), 1)
          const result: SubmitResult = yield* submitTo(entry, s)
          // anything but "provably never taken" ends the chain: an unknown may have been sent
          if (result._tag !== "Unreachable") return result
          reasons.push(result.reason)
          previous = entry
        }
        return { _tag: "Unreachable", reason: reasons.join("; then ") } as const
      })

      const query = (q: Query) => {
        const byRef = q.providerRef === null ? undefined : oneapiNamed.get(q.providerRef.split(":")[0]!)
        const entry = byRef === undefined ? routeFor(q.to) : undefined
        const route = byRef ?? (entry?.kind === "oneapi" ? entry.route : undefined)
        if (route !== undefined) return route.query(q, clock.currentTimeMillisUnsafe() + settings.responseTimeoutMs)
        return inner.query(q)
      }

      const table = prefixTable(entries)
      const sendable = (): Sendable => {
        const smppSendable = hasSmpp ? inner.sendable() : ({ _tag: "All" } as const)
        const prefixes = table.map(({ prefix, route }) => ({
          prefix,
          held: route.kind === "oneapi" ? route.route.holdsSlot : canSend(smppSendable, prefix)
        }))
        return prefixes.every((p) => p.held) ? { _tag: "All" } : { _tag: "ByPrefix", prefixes }
      }

      const oneapiRate = oneapi.every((route) => route.ratePerSecond > 0)
        ? oneapi.reduce((sum, route) => sum + route.ratePerSecond, 0)
        : undefined
      const smppRate = hasSmpp ? inner.ratePerSecond : 0
      return Provider.of({
        submit,
        query,
        health: Effect.map(inner.health, (smppHealth) => [...smppHealth, ...oneapi.map((route) => route.health)]),
        routeOf: (to) => routeFor(to)?.name,
        sendable,
        pace: (to) => {
          const entry = routeFor(to)
          return entry === undefined ? Effect.void : entry.kind === "smpp" ? inner.pace(to) : entry.route.pace
        },
        paced: (hasSmpp && inner.paced) || oneapi.some((route) => route.ratePerSecond > 0),
        // every route of the longest chain may take its whole deadline
        submitDeadlineMs: settings.responseTimeoutMs * Math.max(...[...chains.values()].map((c) => c.length)),
        ratePerSecond: oneapiRate === undefined || smppRate === undefined ? undefined : oneapiRate + smppRate
      })
    })
  )
