/**
 * What the SMSC simulator does with a `submit_sm`, by recipient (docs/decisions.md#smpp): the
 * in-process simulator's test numbers (section 5) reproduced over SMPP. Any other number is
 * accepted at once, then delivered. The numbers are written out here rather than imported, so
 * that the standalone SMSC does not load the in-process simulator (and its database code).
 */

export interface Behaviour {
  /** The `submit_sm_resp` status. */
  readonly status: number
  /** When the answer is sent: at once, after SMS_SIMULATOR_SLOW_MS, after SMS_SMSC_LATE_MS, or never. */
  readonly answer: "now" | "slow" | "late" | "never"
  /** The receipt of a message taken (status 0): its final `stat:`, or none. */
  readonly receipt: "DELIVRD" | "UNDELIV" | "none"
}

export const ESME_ROK = 0x00
export const ESME_RSYSERR = 0x08
export const ESME_RSUBMITFAIL = 0x45
export const ESME_RTHROTTLED = 0x58

const byNumber: ReadonlyMap<string, Behaviour> = new Map<string, Behaviour>([
  ["+261340000001", { status: ESME_ROK, answer: "now", receipt: "DELIVRD" }],
  ["+261340000002", { status: ESME_ROK, answer: "now", receipt: "UNDELIV" }],
  ["+261340000003", { status: ESME_RSUBMITFAIL, answer: "now", receipt: "none" }],
  ["+261340000004", { status: ESME_ROK, answer: "late", receipt: "DELIVRD" }],
  ["+261340000005", { status: ESME_RTHROTTLED, answer: "now", receipt: "none" }],
  ["+261340000006", { status: ESME_ROK, answer: "now", receipt: "none" }],
  ["+261340000007", { status: ESME_ROK, answer: "slow", receipt: "DELIVRD" }],
  ["+261340000008", { status: ESME_RSYSERR, answer: "late", receipt: "none" }],
  ["+261340000009", { status: ESME_ROK, answer: "never", receipt: "none" }]
])

const otherwise: Behaviour = { status: ESME_ROK, answer: "now", receipt: "DELIVRD" }

/** The behaviour for a recipient in E.164 form. */
export const behaviourOf = (to: string): Behaviour => byNumber.get(to) ?? otherwise
