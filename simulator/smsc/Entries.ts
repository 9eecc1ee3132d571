/**
 * What the SMSC simulator's journal (simulator/Journal.ts) holds: the messages it took, as kept,
 * the receipts it owes, and the entries that record them (Book.ts writes and reads them).
 */
/** A message the simulator took, as kept: what `query_sm` and its receipt need. */
export interface KnownMessage {
  /** The ids given to its parts, in order; the first is the message's id. */
  readonly ids: ReadonlyArray<number>
  readonly from: string
  /** E.164, with `+`. */
  readonly to: string
  readonly sourceTon: number
  readonly sourceNpi: number
  readonly destTon: number
  readonly destNpi: number
  /** SMPP message_state. */
  state: number
}

/** A receipt owed for a message: its final `stat:` and when it is due (epoch ms, so that it means the same to the next process). */
export interface Owed {
  readonly word: "DELIVRD" | "UNDELIV"
  readonly dueAt: number
}

export type Entry =
  /** Every id below `below` may have been given. */
  | { readonly kind: "ids"; readonly below: number }
  | { readonly kind: "taken"; readonly message: KnownMessage; readonly owed?: Owed }
  | { readonly kind: "state"; readonly id: number; readonly state: number }
  /** The receipt of the message with this (first) id was answered with status 0. */
  | { readonly kind: "acknowledged"; readonly id: number }
