/**
 * The SMPP 3.4 provider (contract section 8): one bind per SMSC route, a number routed by its
 * longest matching prefix, each submission's result mapped from the SMSC's answers, late answers
 * and delivery receipts reported to the ProviderInbox (a receipt is acknowledged only once the
 * inbox stored it).
 */
import { Clock, Effect, FiberSet, Layer, Random, Schedule } from "effect"
import smpp from "smpp"
import { maskPhone } from "../../domain/Phone.ts"
import {
  type LateResult,
  Provider,
  ProviderInbox,
  type Query,
  type QueryResult,
  type Submission,
  type SubmitResult
} from "../Provider.ts"
import { makeRouter } from "../Routing.ts"
import { backoffMs } from "./Backoff.ts"
import { readDeliverSm } from "./DeliverSm.ts"
import type { Link } from "./Link.ts"
import { idForQuery, idFromReceipt, idFromResponse, parseProviderRef, providerRef } from "./MessageIds.ts"
import { type PartContext, Route, type RouteEvents } from "./Route.ts"
import type { SmppSettings } from "./SmppSettings.ts"
import { describeStatus, isThrottling, Status } from "./Statuses.ts"
import { querySmFields, submitSmParts } from "./SubmitPdus.ts"

/** Most receipts being stored at once; beyond, a receipt is answered 0x64 and the SMSC sends it again later. */
const receiptsInFlightMax = 256

/** How a late answer is retried while the inbox is unavailable (it comes only once). */
const lateResultRetry = { schedule: Schedule.exponential("200 millis"), times: 10 }

/** What a late answer to one part proves about the whole message. */
const lateEvidence = (route: Route, late: PartContext, pdu: smpp.PDU): LateResult["result"] => {
  const status = pdu.command_status
  const part = late.parts > 1 ? `part ${late.part} of ${late.parts} ` : ""
  if (status !== Status.ok) return { _tag: "Rejected", reason: `${route.name} answered ${part}after the deadline: ${describeStatus(status)}` }
  // the parts after an unanswered one were never sent: the message as a whole was not taken
  if (late.part < late.parts) {
    return { _tag: "Rejected", reason: `${route.name} accepted ${part}after the deadline; the rest of the message was never sent` }
  }
  const id = late.firstId ?? idFromResponse(route.settings.msgIdType, pdu.message_id ?? "")
  return { _tag: "Accepted", providerRef: providerRef(route.name, id) }
}

/** The SMPP provider over the given SMSCs; its connections close (in-flight submissions end Unknown) when its scope closes. */
export const SmppProviderLive = (settings: SmppSettings): Layer.Layer<Provider, never, ProviderInbox> =>
  Layer.effect(Provider, Effect.gen(function*() {
    const inbox = yield* ProviderInbox
    const clock = yield* Clock.Clock
    const runFork = yield* FiberSet.makeRuntime<never>()
    let receiptsInFlight = 0
    // whether the last receipt could not be stored: an outage is logged when it starts and when it ends, not per receipt
    let inboxDown = false

    const storeReceipt = (route: Route, link: Link<PartContext>, pdu: smpp.PDU, id: string, outcome: "delivered" | "undeliverable", doneAt: Date | undefined) =>
      inbox.receipt({
        providerRef: providerRef(route.name, idFromReceipt(route.settings.msgIdType, id)),
        outcome,
        occurredAt: doneAt ?? new Date(clock.currentTimeMillisUnsafe())
      }).pipe(
        Effect.matchEffect({
          onSuccess: () =>
            Effect.suspend(() => {
              link.respond(pdu, Status.ok)
              if (!inboxDown) return Effect.void
              inboxDown = false
              return Effect.logInfo("SMPP receipts stored again")
            }),
          onFailure: (error) =>
            Effect.suspend(() => {
              link.respond(pdu, Status.temporaryAppError)
              const log = inboxDown ? Effect.logDebug : Effect.logWarning
              inboxDown = true
              return log("SMPP receipts not stored: the inbox is unavailable; the SMSC will send them again", error.cause)
            }).pipe(Effect.annotateLogs({ route: route.name }))
        }),
        Effect.ensuring(Effect.sync(() => receiptsInFlight--))
      )

    const events: RouteEvents = {
      onDeliver: (route, link, pdu) => {
        const read = readDeliverSm(pdu)
        switch (read._tag) {
          case "Receipt":
            if (receiptsInFlight >= receiptsInFlightMax) return link.respond(pdu, Status.temporaryAppError)
            receiptsInFlight++
            runFork(storeReceipt(route, link, pdu, read.id, read.outcome, read.doneAt))
            return
          case "NotFinal":
            return link.respond(pdu, Status.ok)
          case "Unreadable":
            link.respond(pdu, Status.ok)
            runFork(Effect.logWarning("SMPP receipt ignored", read.why).pipe(Effect.annotateLogs({ route: route.name })))
            return
          case "MobileOriginated":
            link.respond(pdu, Status.ok)
            runFork(Effect.logInfo("SMPP mobile-originated message ignored").pipe(Effect.annotateLogs({ route: route.name })))
        }
      },
      onLateAnswer: (route, late, pdu) => {
        const evidence = { organisationId: late.organisationId, messageId: late.messageId, result: lateEvidence(route, late, pdu) }
        runFork(inbox.lateResult(evidence).pipe(
          Effect.retry(lateResultRetry),
          Effect.catch((error) => Effect.logError("SMPP late answer lost: the inbox stayed unavailable", error.cause)),
          Effect.annotateLogs({ route: route.name, message_id: late.messageId })
        ))
      }
    }

    const routes = settings.routes.map((r) => new Route(r, settings.responseTimeoutMs, settings.timing, clock, events))
    for (const route of routes) yield* Effect.forkScoped(route.run)
    // added after the forks, so it runs before they are interrupted: the binds end with an unbind
    yield* Effect.addFinalizer(() => Effect.forEach(routes, (route) => route.close, { concurrency: "unbounded", discard: true }))
    const routeFor = makeRouter(routes)
    const routeNamed = new Map(routes.map((route) => [route.name, route]))

    const submit = Effect.fn("SmppProvider.submit")(function*(s: Submission): Effect.fn.Return<SubmitResult> {
      const route = routeFor(s.to)
      if (route === undefined) return { _tag: "Unreachable", reason: `no route: no SMSC serves ${maskPhone(s.to)}` }
      const deadlineMs = clock.currentTimeMillisUnsafe() + settings.responseTimeoutMs
      const parts = submitSmParts(s, route.nextConcatRef())
      let firstId: string | undefined
      for (let i = 0; i < parts.length; i++) {
        const context: PartContext = { organisationId: s.organisationId, messageId: s.messageId, part: i + 1, parts: parts.length, firstId }
        const label = parts.length > 1 ? `part ${i + 1} of ${parts.length}: ` : ""
        for (let throttled = 0; ; throttled++) {
          const outcome = yield* route.submit(parts[i]!, context, deadlineMs)
          if (outcome._tag === "NotWritten") return { _tag: "Unreachable", reason: label + outcome.reason }
          if (outcome._tag === "Unknown") return { _tag: "Unknown", reason: label + outcome.reason }
          if (outcome.status === Status.ok) {
            firstId ??= idFromResponse(route.settings.msgIdType, outcome.messageId)
            break
          }
          if (!isThrottling(outcome.status)) {
            return { _tag: "Rejected", reason: `${label}${route.name} refused it: ${describeStatus(outcome.status)}` }
          }
          const delayMs = backoffMs(throttled, settings.timing.throttleInitialMs, settings.timing.throttleMaxMs, yield* Random.next)
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

    const query = Effect.fn("SmppProvider.query")(function*(q: Query): Effect.fn.Return<QueryResult> {
      const unknown = { _tag: "Unknown" } as const
      const ref = q.providerRef === null ? undefined : parseProviderRef(q.providerRef)
      const route = ref === undefined ? undefined : routeNamed.get(ref.route)
      if (ref === undefined || route === undefined) return unknown
      const pdu = new smpp.PDU("query_sm", querySmFields(idForQuery(route.settings.msgIdType, ref.id), q.senderName))
      const answer = yield* route.request(pdu, clock.currentTimeMillisUnsafe() + settings.responseTimeoutMs)
      if (answer._tag === "None" || answer.value._tag !== "Answered") return unknown
      const status = answer.value.pdu.command_status
      if (status === Status.ok) return { _tag: "Accepted", providerRef: q.providerRef! }
      if (status === Status.queryFailed) {
        return { _tag: "NotReceived", reason: `${route.name} does not know message ${ref.id}: ${describeStatus(status)}` }
      }
      return unknown
    })

    return Provider.of({
      submit,
      query,
      health: Effect.sync(() => routes.map((route) => route.health)),
      submitDeadlineMs: settings.responseTimeoutMs
    })
  }))
