/**
 * POST /admin/v1/simulator/inbound: the simulated provider sends an MO now
 * (docs/two-way.md), stored through the inbox and made into a
 * message before the answer; 409 simulator_only with a real provider.
 *
 * POST /admin/v1/organizations/{org_id}/messages/{message_id}/receipt: the simulated provider
 * sends a receipt now for an `accepted` message. The receipt goes through the durable inbox like
 * any other and is applied at once, so the answer shows the message after it (under the system
 * clock the background applier may take it first; the outcome is the same).
 */
import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SimulatorControl } from "../provider/SimulatorControl.ts"
import { Receipts } from "../receipts/Receipts.ts"
import { MessageNotAccepted, NotFound, ProviderNotSimulator, SimulatorOnly } from "../domain/Errors.ts"
import { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Assembler } from "../inbound/Assembler.ts"
import { Messages } from "../messages/Messages.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { Organisations } from "../organisations/Organisations.ts"
import { AdminApi } from "./AdminApi.ts"
import { withTimeline } from "./Timeline.ts"

export const SimulatorHandlers = HttpApiBuilder.group(
  AdminApi,
  "simulator",
  Effect.fn(function* (handlers) {
    const organisations = yield* Organisations
    const messages = yield* Messages
    const store = yield* MessageStore
    const receipts = yield* Receipts
    // absent when SMS_PROVIDER=smpp: receipts then come from the SMSC only
    const simulator = yield* Effect.serviceOption(SimulatorControl)
    const assembler = yield* Assembler

    return handlers
      .handle("sendInbound", ({ payload }) =>
        Effect.gen(function* () {
          if (Option.isNone(simulator)) {
            return yield* SimulatorOnly.withMessage(
              "The provider is not the simulator (SMS_PROVIDER=smpp): inbound messages come from the SMSC only"
            )
          }
          yield* simulator.value
            .sendInbound(payload.from, payload.to, payload.text)
            .pipe(
              Effect.catchTag("InboxUnavailable", () =>
                Effect.fail(new DatabaseUnavailable("the inbox could not store the simulated inbound message"))
              )
            )
          // made into a message now, whatever the clock (the background loops would within a moment)
          while ((yield* assembler.assembleDue) > 0) {}
        })
      )
      .handle("sendReceipt", ({ params, payload }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const message = yield* messages.get(org.id, params.message_id)
          if (message === undefined) return yield* NotFound.withMessage("No such message")
          const notSimulated = (why: string) => ProviderNotSimulator.withMessage(why, { messageId: message.id })
          if (Option.isNone(simulator)) {
            return yield* notSimulated(
              "The provider is not the simulator (SMS_PROVIDER=smpp): only the SMSC sends receipts"
            )
          }
          if (message.status !== "accepted") {
            return yield* MessageNotAccepted.withMessage(
              `Only an accepted message can get a receipt; this one is ${message.status}`,
              { messageId: message.id }
            )
          }
          if (!(yield* simulator.value.sendReceipt(org.id, message.id, payload.outcome))) {
            return yield* notSimulated(
              "The simulator never received this message (it was sent through another provider)"
            )
          }
          yield* receipts.applyDue
          return yield* withTimeline(store, (yield* messages.get(org.id, message.id)) ?? message)
        })
      )
  })
)
