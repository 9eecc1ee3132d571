/** Whether an organisation may send now, and under which sender: the checks every admission makes. */
import { Effect } from "effect"
import { SenderNameUnavailable, SmsUnavailable } from "../domain/Errors.ts"
import type { SendingProfile } from "../organisations/Organisations.ts"

/** The sender name to use, or 403 sms_unavailable / sender_name_unavailable. */
export const requireSendable = (
  profile: SendingProfile
): Effect.Effect<string, SmsUnavailable | SenderNameUnavailable> =>
  !profile.smsEnabled
    ? Effect.fail(SmsUnavailable.withMessage("SMS is not available for this organisation"))
    : !profile.senderActive
      ? Effect.fail(
          SenderNameUnavailable.withMessage(
            `The sender name ${profile.senderName} is not registered and active for this organisation`
          )
        )
      : Effect.succeed(profile.senderName)
