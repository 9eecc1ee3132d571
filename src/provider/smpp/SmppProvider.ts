/**
 * The SMPP 3.4 provider (docs/decisions.md#smpp): one bind per SMSC route, a number routed by its
 * longest matching prefix, each submission's result mapped from the SMSC's answers; late answers
 * and delivery receipts go to the ProviderInbox (SmppInbound.ts). An answer whose message id the
 * service cannot keep (not 1 to 65 visible ASCII characters) makes only its own message `unknown`.
 */
import { Clock, Effect, FiberSet, Layer, Option } from "effect"
import smpp from "smpp"
import { maskPhone } from "../../domain/Phone.ts"
import {
  Provider,
  ProviderInbox,
  type Query,
  type QueryResult,
  type Sendable,
  type Submission,
  type SubmitResult
} from "../Provider.ts"
import { BindSlotStore, makeBindGate, openGate } from "./BindSlots.ts"
import { makeRouter, prefixTable } from "../Routing.ts"
import { idForQuery, idFromResponse, isValidMessageId, parseProviderRef, printable, providerRef } from "./MessageIds.ts"
import { throttleSchedule, stepper } from "./RetrySchedules.ts"
import { type PartContext, Route } from "./Route.ts"
import { makeRouteEvents } from "./SmppInbound.ts"
import type { SmppSettings } from "../../config/SmppSettings.ts"
import { describeStatus, isThrottling, Status } from "./Statuses.ts"
import { querySmFields, submitSmParts } from "./SubmitPdus.ts"

/**
 * The SMPP provider over the given SMSCs; its connections close (in-flight submissions end
 * Unknown) when its scope closes. With a BindSlotStore (the service), each route binds only
 * while this process holds one of the fleet's `binds` slots of it; without one (tests of the
 * adapter alone), every route binds.
 */
export const smppProviderLayer = (settings: SmppSettings): Layer.Layer<Provider, never, ProviderInbox> =>
  Layer.effect(
    Provider,
    Effect.gen(function* () {
      const inbox = yield* ProviderInbox
      const clock = yield* Clock.Clock
      const runFork = yield* FiberSet.makeRuntime<never>()
      const events = makeRouteEvents(inbox, clock, runFork)

      const slots = yield* Effect.serviceOption(BindSlotStore)
      const gates = settings.routes.map((r) =>
        Option.match(slots, {
          onNone: () => openGate(r.binds),
          onSome: (store) => makeBindGate(store, r.name, r.binds)
        })
      )
      const routes = settings.routes.map(
        (r, i) => new Route(r, settings.responseTimeoutMs, settings.timing, clock, events, gates[i])
      )
      // each route's slot taken (or found held by others) before the provider serves: an immediate
      // send arriving first is not handed over for want of an answer from the database
      yield* Effect.forEach(gates, (gate) => gate.attempt, { concurrency: "unbounded", discard: true })
      for (const gate of gates) yield* Effect.forkScoped(gate.run)
      for (const route of routes) yield* Effect.forkScoped(route.run)
      // added after the forks, so it runs before they are interrupted: the binds end with an unbind
      yield* Effect.addFinalizer(() =>
        Effect.forEach(routes, (route) => route.close, { concurrency: "unbounded", discard: true })
      )
      const routeFor = makeRouter(routes)
      const routeNamed = new Map(routes.map((route) => [route.name, route]))

      const submit = Effect.fn("SmppProvider.submit")(function* (s: Submission): Effect.fn.Return<SubmitResult> {
        const route = s.route === undefined ? routeFor(s.to) : routeNamed.get(s.route)
        if (route === undefined)
          return {
            _tag: "Unreachable",
            reason: s.route === undefined ? `no route: no SMSC serves ${maskPhone(s.to)}` : `no SMSC named ${s.route}`
          }
        const deadlineMs = clock.currentTimeMillisUnsafe() + settings.responseTimeoutMs
        const parts = submitSmParts(s, route.nextConcatRef())
        let firstId: string | undefined
        for (let i = 0; i < parts.length; i++) {
          const context: PartContext = {
            organisationId: s.organisationId,
            messageId: s.messageId,
            part: i + 1,
            parts: parts.length,
            firstId
          }
          const label = parts.length > 1 ? `part ${i + 1} of ${parts.length}: ` : ""
          const throttled = yield* stepper(throttleSchedule(settings.timing))
          while (true) {
            const outcome = yield* route.submit(parts[i]!, context, deadlineMs)
            if (outcome._tag === "NotWritten") return { _tag: "Unreachable", reason: label + outcome.reason }
            if (outcome._tag === "Unknown") return { _tag: "Unknown", reason: label + outcome.reason }
            if (outcome.status === Status.ok) {
              if (firstId !== undefined) break
              // taken, under an id the service cannot keep: only this message's result is unknown
              if (!isValidMessageId(outcome.messageId)) {
                const reason = `${label}${route.name} accepted it with an invalid message_id ${printable(outcome.messageId ?? "")}`
                yield* Effect.logWarning("SMPP answer unusable").pipe(
                  Effect.annotateLogs({ route: route.name, detail: reason })
                )
                return { _tag: "Unknown", reason }
              }
              firstId = idFromResponse(route.settings.msgIdType, outcome.messageId)
              break
            }
            if (!isThrottling(outcome.status)) {
              return { _tag: "Rejected", reason: `${label}${route.name} refused it: ${describeStatus(outcome.status)}` }
            }
            const delayMs = yield* throttled(clock.currentTimeMillisUnsafe(), outcome.status)
            // sent again only with a quarter of the response timeout left for its answer: a retry
            // whose answer misses the deadline would turn "never taken" into `unknown`
            if (clock.currentTimeMillisUnsafe() + delayMs + settings.responseTimeoutMs / 4 > deadlineMs) {
              return {
                _tag: "Unreachable",
                reason: `${label}${route.name} throttled it (${describeStatus(outcome.status)}) until the response deadline`
              }
            }
            yield* Effect.sleep(delayMs)
          }
        }
        return { _tag: "Accepted", providerRef: providerRef(route.name, firstId!) }
      })

      const query = Effect.fn("SmppProvider.query")(function* (q: Query): Effect.fn.Return<QueryResult> {
        const unknown = { _tag: "Unknown" } as const
        const ref = q.providerRef === null ? undefined : parseProviderRef(q.providerRef)
        const route = ref === undefined ? undefined : routeNamed.get(ref.route)
        if (ref === undefined || route === undefined) return unknown
        const pdu = new smpp.PDU("query_sm", querySmFields(idForQuery(route.settings.msgIdType, ref.id), q.senderName))
        const answer = yield* route.request(pdu, clock.currentTimeMillisUnsafe() + settings.responseTimeoutMs)
        if (answer._tag === "None" || answer.value._tag !== "Answered") return unknown
        const status = answer.value.status
        if (status === Status.ok) return { _tag: "Accepted", providerRef: q.providerRef! }
        if (status === Status.queryFailed) {
          return {
            _tag: "NotReceived",
            reason: `${route.name} does not know message ${ref.id}: ${describeStatus(status)}`
          }
        }
        return unknown
      })

      const byPrefix = prefixTable(routes)
      const sendable = (): Sendable =>
        routes.every((route) => route.holdsSlot)
          ? { _tag: "All" }
          : { _tag: "ByPrefix", prefixes: byPrefix.map(({ prefix, route }) => ({ prefix, held: route.holdsSlot })) }

      return Provider.of({
        submit,
        sendable,
        pace: (to) => routeFor(to)?.pace ?? Effect.void,
        paced: routes.some((route) => route.ratePerSecond > 0),
        query,
        health: Effect.sync(() => routes.map((route) => route.health)),
        routeOf: (to) => routeFor(to)?.name,
        submitDeadlineMs: settings.responseTimeoutMs,
        ratePerSecond: routes.every((route) => route.ratePerSecond > 0)
          ? routes.reduce((sum, route) => sum + route.ratePerSecond, 0)
          : undefined
      })
    })
  )
