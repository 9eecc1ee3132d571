/**
 * What a `deliver_sm` or `data_sm` says (docs/decisions.md#smpp): a delivery receipt (esm_class bit
 * 0x04) with the SMSC's message id (`receipted_message_id` TLV, else `id:` in the text), its state
 * (`message_state` TLV, else `stat:` in the text), the number it is about (`source_addr`) and its
 * dates; or a mobile-originated message. The text is read from `short_message`, or from the
 * `message_payload` TLV when `short_message` is empty. Every field is checked here, before it
 * can reach the database: a receipt whose id is not 1 to 65 visible ASCII characters is
 * unreadable.
 */
import type smpp from "smpp"
import { isValidMessageId, printable } from "./MessageIds.ts"

export type DeliverSm =
  /** A final receipt: the message was delivered, or never will be. */
  | {
      readonly _tag: "Receipt"
      readonly id: string
      readonly outcome: "delivered" | "undeliverable"
      /** The number the receipt is about, E.164, when `source_addr` holds a Malagasy mobile number. */
      readonly recipient: string | null
      /** The receipt's `submit date:` (UTC, to the minute or second), when it has one. */
      readonly submittedAt: Date | undefined
      /** The receipt's `done date:`, when it has one. */
      readonly doneAt: Date | undefined
      /** How coarse `doneAt` is: 60,000 ms when written to the minute, 1,000 to the second. */
      readonly donePrecisionMs: number
    }
  /** A receipt of a state that changes nothing (ENROUTE, ACCEPTD, UNKNOWN…): acknowledged and dropped. */
  | { readonly _tag: "NotFinal"; readonly state: string }
  /** A receipt without a usable message id or state: nothing can use it. */
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

/** `YYMMDDhhmm[ss]` in UTC, as receipts write their dates; undefined when it is not a valid date. */
export const parseReceiptDate = (digits: string): Date | undefined => {
  const m = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?$/.exec(digits)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1).map((d) => Number(d ?? "0")) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const ms = Date.UTC(2000 + year, month - 1, day, hour, minute, second)
  const date = new Date(ms)
  // Date.UTC rolls 31 February over into March: such a date is not one
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60
    ? date
    : undefined
}

const textOf = (field: smpp.PduFields["short_message"]): string => {
  if (field === undefined) return ""
  if (Buffer.isBuffer(field)) return field.toString("latin1")
  return typeof field.message === "string" ? field.message : field.message.toString("latin1")
}

/** `source_addr` as an E.164 Malagasy mobile number (international with or without `+`, or national `03…`), else null. */
export const recipientOf = (address: string | undefined): string | null => {
  const digits = address?.replace(/^\+/, "") ?? ""
  if (/^2613\d{8}$/.test(digits)) return `+${digits}`
  if (/^03\d{8}$/.test(digits)) return `+261${digits.slice(1)}`
  return null
}

/** Reads a `deliver_sm` or a `data_sm`. */
export const readDeliverSm = (pdu: smpp.PduFields): DeliverSm => {
  if (((pdu.esm_class ?? 0) & ESM_CLASS_RECEIPT) === 0) return { _tag: "MobileOriginated" }
  const short = textOf(pdu.short_message)
  const text = short === "" ? textOf(pdu.message_payload) : short
  const id = pdu.receipted_message_id?.replace(/\0+$/, "") || /\bid:(\S+)/i.exec(text)?.[1]
  const word = /\bstat:([A-Z]+)/i.exec(text)?.[1]?.toUpperCase()
  const state = pdu.message_state ?? (word === undefined ? undefined : stateByWord[word])
  if (id === undefined || id === "") return { _tag: "Unreadable", why: "receipt without a message id" }
  if (!isValidMessageId(id)) return { _tag: "Unreadable", why: `receipt with an invalid message id ${printable(id)}` }
  if (state === undefined) return { _tag: "Unreadable", why: `receipt of ${id} without a known state` }
  const outcome = outcomeOf(state)
  if (outcome === undefined) return { _tag: "NotFinal", state: wordByState.get(state) ?? `state ${state}` }
  const submitted = /\bsubmit date:(\d{10,12})\b/i.exec(text)?.[1]
  const done = /\bdone date:(\d{10,12})\b/i.exec(text)?.[1]
  return {
    _tag: "Receipt",
    id,
    outcome,
    recipient: recipientOf(pdu.source_addr),
    submittedAt: submitted === undefined ? undefined : parseReceiptDate(submitted),
    doneAt: done === undefined ? undefined : parseReceiptDate(done),
    donePrecisionMs: done?.length === 12 ? 1_000 : 60_000
  }
}

/**
 * When the receipt says it happened: its `done date`, unless that date is no finer than the time
 * the receipt arrived (the arrival falls within its minute or second) or lies after it; then the
 * arrival. A done date written to the minute would otherwise put a delivery before its send.
 */
export const occurredAt = (
  receipt: Pick<Extract<DeliverSm, { _tag: "Receipt" }>, "doneAt" | "donePrecisionMs">,
  arrivedAt: Date
): Date =>
  receipt.doneAt === undefined || arrivedAt.getTime() < receipt.doneAt.getTime() + receipt.donePrecisionMs
    ? arrivedAt
    : receipt.doneAt
