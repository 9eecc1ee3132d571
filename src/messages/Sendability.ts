/** Whether an organisation may send now, and under which sender: the checks every admission makes. */
import { Effect } from "effect"
import type { SqlError } from "effect/sql"
import { SenderNameUnavailable, SmsUnavailable } from "../domain/Errors.ts"
import type { Organisations } from "../organisations/Organisations.ts"

/**
 * The sender name to use (the organisation's default when none is asked for), or
 * 403 sms_unavailable / sender_name_unavailable.
 */
export const requireSendable = (
  organisations: Organisations["Service"],
  organisationId: string,
  requestedSender: string | undefined
): Effect.Effect<string, SmsUnavailable | SenderNameUnavailable | SqlError.SqlError> =>
  Effect.gen(function*() {
    const org = yield* organisations.get(organisationId).pipe(Effect.catchTag("NotFound", Effect.die))
    if (!org.smsEnabled) return yield* SmsUnavailable.withMessage("SMS is not available for this organisation")
    const senderName = requestedSender ?? org.defaultSenderName
    const sender = yield* organisations.findSender(organisationId, senderName)
    if (sender._tag === "None" || !sender.value.active) {
      return yield* SenderNameUnavailable.withMessage(`The sender name ${senderName} is not registered and active for this organisation`)
    }
    return senderName
  })
