/** SMPP 3.4 command statuses the adapter acts on, and their names for reasons and logs. */
import smpp from "smpp"

export const Status = {
  ok: 0x00,
  invalidCommand: 0x03,
  systemError: 0x08,
  queueFull: 0x14,
  throttled: 0x58,
  /** ESME_RX_T_APPN: the ESME cannot take it now; the SMSC sends it again later. */
  temporaryAppError: 0x64,
  queryFailed: 0x67
} as const

const names: ReadonlyMap<number, string> = new Map(Object.entries(smpp.errors).map(([name, code]) => [code, name]))

/** `0x58 ESME_RTHROTTLED`: the status in hexadecimal with its SMPP name. */
export const describeStatus = (status: number): string =>
  `0x${status.toString(16).padStart(2, "0")} ${names.get(status) ?? "(vendor-specific status)"}`

/** Whether the SMSC asks the ESME to slow down and submit again (ESME_RTHROTTLED, ESME_RMSGQFUL). */
export const isThrottling = (status: number): boolean => status === Status.throttled || status === Status.queueFull
