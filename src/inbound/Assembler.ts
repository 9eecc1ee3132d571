/**
 * Inbound messages made from their stored parts (docs/two-way.md),
 * one transaction per message: its parts locked, joined in order and read in their coding; the
 * message routed, stored with its `message.received` event, its parts marked joined; a consent
 * word applied to the organisation it went to (source `sms`, with its event). A message still
 * missing parts 10 minutes after its first is made with what it has, `incomplete`. The background
 * loops run it (dispatch/BackgroundLoops.ts), and the test clock's advance (dispatch/DueWork.ts);
 * whatever a crash interrupts is still in the table and is made by the next round.
 */
import { Context, Effect, Layer, Metric } from "effect"
import { AppConfig } from "../config/Config.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import { consentRequest } from "../domain/Consent.ts"
import { decodeText } from "../domain/DataCoding.ts"
import { joinParts, reassemblyWindowMs } from "../domain/InboundParts.ts"
import { phonePattern } from "../domain/Phone.ts"
import { OptOutStore } from "../consent/OptOutStore.ts"
import { inboundMessages } from "../observability/Metrics.ts"
import { Ids } from "../platform/Ids.ts"
import { now } from "../clock/Time.ts"
import { InboundMessageStore } from "./InboundMessageStore.ts"
import { InboundPartStore, type PartGroup, repeatWindowMs } from "./InboundPartStore.ts"
import { InboundRouting } from "./InboundRouting.ts"
import { inboundWire } from "./InboundWire.ts"

/** Most messages one round makes. */
export const assembleRoundMax = 100
/** Most joined parts one round forgets. */
const forgetSetMax = 1_000
/** Most messages one retention set erases. */
export const inboundRetentionSetMax = 200

export class Assembler extends Context.Service<
  Assembler,
  {
    /** Makes up to `assembleRoundMax` messages whose parts are all there or whose time is up; how many. */
    readonly assembleDue: Effect.Effect<number, DatabaseUnavailable>
    /** When the oldest message still missing parts is made anyway, if one waits. */
    readonly nextDue: Effect.Effect<Date | undefined, DatabaseUnavailable>
    /** Forgets parts joined longer ago than a repeat of them could come; how many. */
    readonly forgetJoined: Effect.Effect<number, DatabaseUnavailable>
    /** Erases the sender and text of messages past their organisation's retention, one set; how many. */
    readonly eraseExpired: Effect.Effect<number, DatabaseUnavailable>
  }
>()("sms/Assembler") {
  static readonly layer = Layer.effect(
    Assembler,
    Effect.gen(function* () {
      const config = yield* AppConfig
      const parts = yield* InboundPartStore
      const messages = yield* InboundMessageStore
      const routing = yield* InboundRouting
      const optOuts = yield* OptOutStore
      const { transaction } = yield* Transactions
      const ids = yield* Ids

      /** Makes the message of `group` if its parts are still waiting (another process may have made it); whether it did. */
      const assemble = (group: PartGroup, at: Date) =>
        transaction(
          Effect.gen(function* () {
            const locked = yield* parts.lock(group)
            const first = locked[0]
            if (first === undefined) return undefined
            const joined = joinParts(group.total, locked)
            const firstAt = Math.min(...locked.map((p) => p.receivedAt.getTime()))
            // parts held by another transaction were skipped: this one may not see them all
            if (!joined.complete && firstAt > at.getTime() - reassemblyWindowMs) return undefined
            const decoded = decodeText(first.dataCoding, joined.octets)
            const receivedAt = new Date(Math.max(...locked.map((p) => p.receivedAt.getTime())))
            const route = yield* routing.route(group.fromNumber, group.toNumber, decoded.text, at)
            const consent = route.organisationId === null ? undefined : consentRequest(decoded.text, route.keyword)
            const row = {
              id: yield* ids.timeOrdered(receivedAt),
              organisationId: route.organisationId,
              source: group.source,
              fromNumber: group.fromNumber,
              toNumber: group.toNumber,
              text: decoded.text,
              textHex: decoded.hex,
              dataCoding: first.dataCoding,
              keyword: consent?.word ?? route.keyword,
              segments: joined.segments,
              incomplete: !joined.complete,
              inReplyTo: route.inReplyTo,
              receivedAt,
              routed: route.organisationId !== null
            }
            yield* messages.insert(row, inboundWire(row), at)
            yield* parts.markJoined(
              locked.map((p) => p.id),
              at
            )
            if (consent !== undefined && route.organisationId !== null && phonePattern.test(group.fromNumber)) {
              const change = {
                organisationId: route.organisationId,
                phoneNumber: group.fromNumber,
                source: "sms" as const,
                inboundMessageId: row.id,
                at
              }
              if (consent.action === "opt_out") yield* optOuts.optOut({ ...change, id: yield* ids.uuid })
              else yield* optOuts.optIn(change)
            }
            return row.routed
          })
        ).pipe(
          Effect.tap((routed) =>
            routed === undefined ? Effect.void : Metric.update(inboundMessages[routed ? "true" : "false"], 1)
          ),
          Effect.map((routed) => routed !== undefined)
        )

      const assembleDue = Effect.gen(function* () {
        const at = yield* now
        const due = yield* parts.due(at, new Date(at.getTime() - reassemblyWindowMs), assembleRoundMax)
        let made = 0
        for (const group of due) if (yield* assemble(group, at)) made++
        return made
      }).pipe(Effect.withSpan("Assembler.assembleDue"))

      return Assembler.of({
        assembleDue,
        nextDue: Effect.map(parts.oldestWaiting, (first) =>
          first === undefined ? undefined : new Date(first.getTime() + reassemblyWindowMs)
        ),
        forgetJoined: Effect.flatMap(now, (at) =>
          parts.forgetJoined(new Date(at.getTime() - repeatWindowMs), forgetSetMax)
        ),
        eraseExpired: Effect.flatMap(now, (at) =>
          messages.eraseExpired(at, config.retentionDays, inboundRetentionSetMax)
        )
      })
    })
  )
}
