/**
 * What a `deliver_sm` says (contract section 8): a delivery receipt (esm_class bit 0x04) with
 * the SMSC's message id (`receipted_message_id` TLV, else `id:` in the text) and its state
 * (`message_state` TLV, else `stat:` in the text), or a mobile-originated message.
 */
import type smpp from "smpp"

export type DeliverSm =
  /** A final receipt: the message was delivered, or never will be. */
  | { readonly _tag: "Receipt"; readonly id: string; readonly outcome: "delivered" | "undeliverable"; readonly doneAt: Date | undefined }
  /** A receipt of a state that changes nothing (ENROUTE, ACCEPTD, UNKNOWN…): acknowledged and dropped. */
  | { readonly _tag: "NotFinal"; readonly state: string }
  /** A receipt without a message id or a state: nothing can use it. */
  | { readonly _tag: "Unreadable"; readonly why: string }
  /** A message a mobile sent to the sender (not a receipt). */
  | { readonly _tag: "MobileOriginated" }

const ESM_CLASS_RECEIPT = 0x04

/** `message_state` values (SMPP 3.4 5.2.28) by the `stat:` words of receipt texts. */
const stateByWord: Readonly<Record<string, number>> = {
  ENROUTE: 1,
  DELIVRD: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNDELIV: 5,
  ACCEPTD: 6,
  UNKNOWN: 7,
  REJECTD: 8
}
const wordByState = new Map(Object.entries(stateByWord).map(([word, state]) => [state, word]))

const outcomeOf = (state: number): "delivered" | "undeliverable" | undefined =>
  state === 2 ? "delivered" : state === 3 || state === 4 || state === 5 || state === 8 ? "undeliverable" : undefined

/** `YYMMDDhhmm[ss]` in UTC, as receipts write `done date:`; undefined when it is not a valid date. */
export const parseDoneDate = (digits: string): Date | undefined => {
  const m = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?$/.exec(digits)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1).map((d) => Number(d ?? "0")) as [number, number, number, number, number, number]
  const ms = Date.UTC(2000 + year, month - 1, day, hour, minute, second)
  const date = new Date(ms)
  // Date.UTC rolls 31 February over into March: such a date is not one
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60 ? date : undefined
}

const textOf = (short: smpp.PduFields["short_message"]): string => {
  if (short === undefined) return ""
  if (Buffer.isBuffer(short)) return short.toString("latin1")
  return typeof short.message === "string" ? short.message : short.message.toString("latin1")
}

/** Reads a `deliver_sm`. */
export const readDeliverSm = (pdu: smpp.PduFields): DeliverSm => {
  if (((pdu.esm_class ?? 0) & ESM_CLASS_RECEIPT) === 0) return { _tag: "MobileOriginated" }
  const text = textOf(pdu.short_message)
  const id = pdu.receipted_message_id?.replace(/\0+$/, "") || /\bid:(\S+)/i.exec(text)?.[1]
  const word = /\bstat:([A-Z]+)/i.exec(text)?.[1]?.toUpperCase()
  const state = pdu.message_state ?? (word === undefined ? undefined : stateByWord[word])
  if (id === undefined || id === "") return { _tag: "Unreadable", why: "receipt without a message id" }
  if (state === undefined) return { _tag: "Unreadable", why: `receipt of ${id} without a known state` }
  const outcome = outcomeOf(state)
  if (outcome === undefined) return { _tag: "NotFinal", state: wordByState.get(state) ?? `state ${state}` }
  const done = /\bdone date:(\d{10,12})\b/i.exec(text)?.[1]
  return { _tag: "Receipt", id, outcome, doneAt: done === undefined ? undefined : parseDoneDate(done) }
}
