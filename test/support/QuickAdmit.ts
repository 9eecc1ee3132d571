/**
 * A scheduled message admitted by the one-statement admission (src/messages/QuickAdmission.ts)
 * alone, as a test of the ledger calls it: due a day ahead, with a key of its own, reserving
 * `segments` credits. Admitted, or the outcome that leaves it to the general path.
 */
import { Effect } from "effect"
import { now, today } from "../../src/clock/Time.ts"
import { QuickAdmission } from "../../src/messages/QuickAdmission.ts"

export const admitScheduledQuickly = (organisationId: string, id: string, segments: number) =>
  Effect.gen(function* () {
    const at = yield* now
    return yield* (yield* QuickAdmission).message({
      organisationId,
      key: `quick-${id}`,
      fingerprint: "quick",
      senderName: undefined,
      text: "quick",
      segments,
      at,
      today: yield* today,
      id,
      to: "+261340000001",
      sendAt: new Date(at.getTime() + 86_400_000),
      relayed: false,
      workerId: null,
      answer: undefined
    })
  })
