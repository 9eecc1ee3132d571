/**
 * What the SMSCs send the adapter besides answers it waits for: delivery receipts and the parts of
 * mobile-originated messages (stored through the ProviderInbox before they are acknowledged:
 * `deliver_sm_resp` status 0 once committed, 0x64 when the inbox cannot store them, so the SMSC
 * sends them again), late answers (evidence for the
 * verifier), and what the adapter refuses (logged at most once a minute per route and kind, and
 * counted). Every field is checked before it is handed on.
 */
import { type Clock, Effect, Metric, Schedule } from "effect"
import type smpp from "smpp"
import { smppRefused } from "../../observability/Metrics.ts"
import { makeOutageLog, makeThrottledLog } from "../../observability/RecurringLogs.ts"
import { recipientOf, senderOf } from "../../domain/InboundAddress.ts"
import type { InboxUnavailable, LateResult, ProviderInbox } from "../Provider.ts"
import { occurredAt, readDeliverSm } from "./DeliverSm.ts"
import type { Link, Response } from "./Link.ts"
import { moPartOf } from "./MoUserData.ts"
import { idFromReceipt, idFromResponse, isValidMessageId, printable, providerRef } from "./MessageIds.ts"
import type { PartContext, Route, RouteEvents } from "./Route.ts"
import { describeStatus, Status } from "./Statuses.ts"

/** Most receipts and mobile-originated parts being stored at once; beyond, one is answered 0x64 and the SMSC sends it again later. */
const receiptsInFlightMax = 256

/** How a late answer is retried while the inbox is unavailable (it comes only once). */
const lateResultRetry = { schedule: Schedule.exponential("200 millis"), times: 10 }

/** Longest silence between two WARN lines about the same misbehaviour of one route. */
const refusalLogIntervalMs = 60_000

/** What a late answer to one part proves about the whole message; undefined when it proves nothing usable. */
export const lateEvidence = (route: Route, late: PartContext, response: Response): LateResult["result"] | undefined => {
  const part = late.parts > 1 ? `part ${late.part} of ${late.parts} ` : ""
  if (response.status !== Status.ok) {
    return {
      _tag: "Rejected",
      reason: `${route.name} answered ${part}after the deadline: ${describeStatus(response.status)}`
    }
  }
  // the parts after an unanswered one were never sent: the message as a whole was not taken
  if (late.part < late.parts) {
    return {
      _tag: "Rejected",
      reason: `${route.name} accepted ${part}after the deadline; the rest of the message was never sent`
    }
  }
  if (late.firstId !== undefined) return { _tag: "Accepted", providerRef: providerRef(route.name, late.firstId) }
  return isValidMessageId(response.messageId)
    ? {
        _tag: "Accepted",
        providerRef: providerRef(route.name, idFromResponse(route.settings.msgIdType, response.messageId))
      }
    : undefined
}

/** The handlers of what arrives on the routes' connections; `runFork` runs their effects in the provider's scope. */
export const makeRouteEvents = (
  inbox: typeof ProviderInbox.Service,
  clock: Clock.Clock,
  runFork: (effect: Effect.Effect<void>) => unknown
): RouteEvents => {
  let receiptsInFlight = 0
  const inboxOutage = makeOutageLog()
  const warn = makeThrottledLog(refusalLogIntervalMs)

  const refused = (route: Route, kind: string, what: string) =>
    runFork(
      Metric.update(smppRefused, 1).pipe(
        Effect.andThen(warn(`${route.name}/${kind}`, `SMPP ${kind}`, { route: route.name, detail: what }))
      )
    )

  /** Answers `pdu` once `store` has committed what it carries (status 0), or 0x64 when it could not, so the SMSC sends it again. */
  const stored = (
    route: Route,
    link: Link<PartContext>,
    pdu: smpp.PDU,
    store: Effect.Effect<void, InboxUnavailable>,
    what: string
  ) =>
    store.pipe(
      Effect.matchEffect({
        onSuccess: () =>
          Effect.suspend(() => {
            link.respond(pdu, Status.ok)
            return inboxOutage.succeeded(`${what} stored again`)
          }),
        onFailure: (error) =>
          Effect.suspend(() => {
            link.respond(pdu, Status.temporaryAppError)
            return inboxOutage.failed(
              `${what} not stored: the inbox is unavailable; the SMSC will send them again`,
              error.cause
            )
          })
      }),
      Effect.annotateLogs({ route: route.name }),
      Effect.ensuring(Effect.sync(() => receiptsInFlight--))
    )

  const storeReceipt = (
    route: Route,
    link: Link<PartContext>,
    pdu: smpp.PDU,
    receipt: Extract<ReturnType<typeof readDeliverSm>, { _tag: "Receipt" }>
  ) =>
    stored(
      route,
      link,
      pdu,
      inbox.receipt({
        providerRef: providerRef(route.name, idFromReceipt(route.settings.msgIdType, receipt.id)),
        outcome: receipt.outcome,
        occurredAt: occurredAt(receipt, new Date(clock.currentTimeMillisUnsafe())),
        recipient: receipt.recipient,
        submittedAt: receipt.submittedAt ?? null
      }),
      "SMPP receipts"
    )

  return {
    onDeliver: (route, link, pdu) => {
      const read = readDeliverSm(pdu)
      switch (read._tag) {
        case "Receipt":
          if (receiptsInFlight >= receiptsInFlightMax) return link.respond(pdu, Status.temporaryAppError)
          receiptsInFlight++
          runFork(storeReceipt(route, link, pdu, read))
          return
        case "NotFinal":
          return link.respond(pdu, Status.ok)
        case "Unreadable":
          // acknowledged: sent again, it would be just as unusable
          link.respond(pdu, Status.ok)
          return refused(route, "receipt unreadable", read.why)
        case "MobileOriginated": {
          const part = moPartOf(pdu)
          if (part === undefined) {
            // acknowledged: sent again, it would be just as unreadable
            link.respond(pdu, Status.ok)
            return refused(route, "mobile-originated unreadable", "a user data header that runs past its data")
          }
          if (receiptsInFlight >= receiptsInFlightMax) return link.respond(pdu, Status.temporaryAppError)
          receiptsInFlight++
          runFork(
            stored(
              route,
              link,
              pdu,
              inbox.mobileOriginated({
                source: route.name,
                from: senderOf(pdu.source_addr_ton ?? 0, pdu.source_addr ?? ""),
                to: recipientOf(pdu.dest_addr_ton ?? 0, pdu.destination_addr ?? ""),
                dataCoding: pdu.data_coding ?? 0,
                position: part.position,
                octets: part.octets
              }),
              "SMPP mobile-originated messages"
            )
          )
        }
      }
    },
    onLateAnswer: (route, late, response) => {
      const result = lateEvidence(route, late, response)
      if (result === undefined) {
        return refused(
          route,
          "late answer unusable",
          `accepted after the deadline with an invalid message_id ${printable(response.messageId ?? "")}`
        )
      }
      runFork(
        inbox.lateResult({ organisationId: late.organisationId, messageId: late.messageId, result }).pipe(
          Effect.retry(lateResultRetry),
          Effect.catch((error) => Effect.logError("SMPP late answer lost: the inbox stayed unavailable", error.cause)),
          Effect.annotateLogs({ route: route.name, message_id: late.messageId })
        )
      )
    },
    onUnexpected: (route, what) => refused(route, "unexpected PDU", what)
  }
}
