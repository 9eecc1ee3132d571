/**
 * SMPP 3.4 command statuses the adapter acts on (and the SMSC simulator answers with,
 * simulator/smsc/), and their names for reasons and logs.
 */
import smpp from "smpp"

export const Status = {
  /** ESME_ROK */
  ok: 0x00,
  /** ESME_RINVCMDID */
  invalidCommand: 0x03,
  /** ESME_RINVBNDSTS: not allowed in the bind state (not bound yet). */
  invalidBindStatus: 0x04,
  /** ESME_RALYBND */
  alreadyBound: 0x05,
  /** ESME_RSYSERR */
  systemError: 0x08,
  /** ESME_RBINDFAIL */
  bindFailed: 0x0d,
  /** ESME_RINVPASWD */
  invalidPassword: 0x0e,
  /** ESME_RINVSYSID */
  invalidSystemId: 0x0f,
  /** ESME_RMSGQFUL */
  queueFull: 0x14,
  /** ESME_RSUBMITFAIL */
  submitFailed: 0x45,
  /** ESME_RTHROTTLED */
  throttled: 0x58,
  /** ESME_RX_T_APPN: the ESME cannot take it now; the SMSC sends it again later. */
  temporaryAppError: 0x64,
  /** ESME_RQUERYFAIL */
  queryFailed: 0x67
} as const

const names: ReadonlyMap<number, string> = new Map(Object.entries(smpp.errors).map(([name, code]) => [code, name]))

/** `0x58 ESME_RTHROTTLED`: the status in hexadecimal with its SMPP name. */
export const describeStatus = (status: number): string =>
  `0x${status.toString(16).padStart(2, "0")} ${names.get(status) ?? "(vendor-specific status)"}`

/** Whether the SMSC asks the ESME to slow down and submit again (ESME_RTHROTTLED, ESME_RMSGQFUL). */
export const isThrottling = (status: number): boolean => status === Status.throttled || status === Status.queueFull
