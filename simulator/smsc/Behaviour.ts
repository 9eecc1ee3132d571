/**
 * What the SMSC simulator does with a `submit_sm`, by recipient (docs/decisions.md#smpp): the
 * in-process simulator's test numbers (docs/integrators.md#simulator-test-numbers) reproduced over
 * SMPP. Any other number is accepted at once, then delivered. The numbers are written out here
 * rather than imported, so that the standalone SMSC does not load the in-process simulator (and
 * its database code).
 */
import { Status } from "../../src/provider/smpp/Statuses.ts"

export interface Behaviour {
  /** The `submit_sm_resp` status. */
  readonly status: number
  /** When the answer is sent: at once, after SMS_SIMULATOR_SLOW_MS, after SMS_SMSC_LATE_MS, or never. */
  readonly answer: "now" | "slow" | "late" | "never"
  /** The receipt of a message taken (status 0): its final `stat:`, or none. */
  readonly receipt: "DELIVRD" | "UNDELIV" | "none"
}

const byNumber: ReadonlyMap<string, Behaviour> = new Map<string, Behaviour>([
  ["+261340000001", { status: Status.ok, answer: "now", receipt: "DELIVRD" }],
  ["+261340000002", { status: Status.ok, answer: "now", receipt: "UNDELIV" }],
  ["+261340000003", { status: Status.submitFailed, answer: "now", receipt: "none" }],
  ["+261340000004", { status: Status.ok, answer: "late", receipt: "DELIVRD" }],
  ["+261340000005", { status: Status.throttled, answer: "now", receipt: "none" }],
  ["+261340000006", { status: Status.ok, answer: "now", receipt: "none" }],
  ["+261340000007", { status: Status.ok, answer: "slow", receipt: "DELIVRD" }],
  ["+261340000008", { status: Status.systemError, answer: "late", receipt: "none" }],
  ["+261340000009", { status: Status.ok, answer: "never", receipt: "none" }]
])

const otherwise: Behaviour = { status: Status.ok, answer: "now", receipt: "DELIVRD" }

/** The behaviour for a recipient in E.164 form. */
export const behaviourOf = (to: string): Behaviour => byNumber.get(to) ?? otherwise
