/**
 * The SMSC simulator's `deliver_sm`, sent until answered: delivery receipts and mobile-originated
 * messages (MO) alike. A `deliver_sm` goes on a bound connection with room in its window (taken
 * in turn), and is sent again `retryMs` later, then after a gap doubling up to 16 times that, on
 * whatever connection is bound then (across reconnections), until a `deliver_sm_resp` with status
 * 0 comes back (an SMSC sends again what the service answered 0x64 ESME_RX_T_APPN); while no
 * connection has room it waits, and goes as soon as one has (a bind, an answer). The receipts
 * owed are kept in the Book, so that a simulator started again on its data directory carries on;
 * an MO lives in memory only.
 */
import { MutableList } from "effect"
import smpp from "smpp"
import type { MsgIdType } from "../../src/config/SmppSettings.ts"
import { sendPdu } from "../../src/provider/smpp/SendPdu.ts"
import { Status } from "../../src/provider/smpp/Statuses.ts"
import type { Book, OwedReceipt } from "./Book.ts"
import { receiptId } from "./IdFormats.ts"
import type { KnownMessage } from "./Entries.ts"
import type { MoPdu } from "./MoParts.ts"
import { messageState, receiptPdu } from "./ReceiptPdu.ts"
import type { Timeline } from "./Timeline.ts"

/** A `deliver_sm_resp` the simulator got for a receipt. */
export interface ReceiptAnswer {
  /** The receipted message's id as the receipt wrote it. */
  readonly id: string
  readonly status: number
}

/** A connection as deliveries see it: where a `deliver_sm` goes, and those sent on it not answered yet. */
export interface DeliveryConnection {
  readonly session: smpp.Session
  readonly bound: boolean
  readonly closed: boolean
  /** `deliver_sm` sent on it and not answered yet, by sequence number. */
  readonly deliveries: Map<number, DeliveryJob>
}

/** One MO part to send: the PDU's fields, its sender and the number or short code it was sent to. */
export interface MoDelivery {
  /** E.164, with `+`. */
  readonly from: string
  readonly to: string
  readonly pdu: MoPdu
}

/** One `deliver_sm` owed, until it is answered with status 0. */
export type DeliveryJob = (
  | { readonly kind: "receipt"; readonly message: KnownMessage; readonly word: "DELIVRD" | "UNDELIV" }
  | ({ readonly kind: "mo" } & MoDelivery)
) & {
  attempts: number
  acked: boolean
  waiting: boolean
  /** Where its last copies went (connection, sequence number, when), so that a re-send frees their place. */
  sentOn: Array<readonly [DeliveryConnection, number, number]>
}

/** `deliver_sm` awaiting their answer on one connection, at most (an SMSC's window). */
const deliveryWindow = 64

const hasRoom = (c: DeliveryConnection): boolean => c.bound && !c.closed && c.deliveries.size < deliveryWindow

/** A bound connection with room for a `deliver_sm`, taken in turn. */
export const pickConnection = <C extends DeliveryConnection>(connections: Set<C>): C | undefined => {
  for (const c of connections) {
    if (hasRoom(c)) {
      // rotate: the next pick starts after this one
      connections.delete(c)
      connections.add(c)
      return c
    }
  }
  return undefined
}

/** An MO part as a `deliver_sm`: from a mobile (international) to a number (international) or a short code or name. */
const moPdu = ({ from, to, pdu }: MoDelivery): smpp.PDU =>
  new smpp.PDU("deliver_sm", {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: from.replace(/^\+/, ""),
    ...(to.startsWith("+")
      ? { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: to.slice(1) }
      : /^\d+$/.test(to)
        ? { dest_addr_ton: 3, dest_addr_npi: 0, destination_addr: to }
        : { dest_addr_ton: 5, dest_addr_npi: 0, destination_addr: to }),
    esm_class: pdu.esm_class,
    data_coding: pdu.data_coding,
    short_message: Buffer.from(pdu.short_message),
    ...(pdu.message_payload === undefined ? {} : { message_payload: Buffer.from(pdu.message_payload) }),
    ...(pdu.sar_msg_ref_num === undefined
      ? {}
      : {
          sar_msg_ref_num: pdu.sar_msg_ref_num,
          sar_total_segments: pdu.sar_total_segments,
          sar_segment_seqnum: pdu.sar_segment_seqnum
        })
  })

/** What the redelivery reads of the simulator (its knobs), and where it records what it sent and got. */
export interface RedeliveryHost {
  /** Send each receipt twice at its first sending. */
  readonly duplicateReceipts: boolean
  /** Whether receipts carry the `receipted_message_id` and `message_state` TLVs besides their text. */
  readonly receiptTlvs: boolean
  readonly idFormat: MsgIdType
  receiptsSent: number
  readonly receiptAnswers: Array<ReceiptAnswer>
  readonly mobileOriginatedAnswers: Array<number>
  /** When set, each answer's delay (ms from its `deliver_sm` sent to its `deliver_sm_resp`) is pushed here by kind. */
  readonly answerDelays: { readonly receipt: Array<number>; readonly mo: Array<number> } | undefined
}

export class Redelivery {
  private readonly host: RedeliveryHost
  private readonly connections: Set<DeliveryConnection>
  private readonly timeline: Timeline
  private readonly book: Book
  /** First re-send of an unanswered `deliver_sm`; it doubles each time, up to 16 times this. */
  private readonly retryMs: number
  /** `deliver_sm` due while no connection had room, in order. */
  private readonly waiting = MutableList.make<DeliveryJob>()

  constructor(
    host: RedeliveryHost,
    connections: Set<DeliveryConnection>,
    timeline: Timeline,
    book: Book,
    retryMs: number
  ) {
    this.host = host
    this.connections = connections
    this.timeline = timeline
    this.book = book
    this.retryMs = retryMs
  }

  /** Sends the receipt `word` of `message` now, and again until it is answered with status 0. */
  receipt(message: KnownMessage, word: "DELIVRD" | "UNDELIV"): void {
    this.send(this.job({ kind: "receipt", message, word }))
  }

  /** Sends an MO part now, and again until it is answered with status 0. */
  mobileOriginated(part: MoDelivery): void {
    this.send(this.job({ kind: "mo", ...part }))
  }

  /** A receipt an earlier simulator on the data directory owed: sent when it was due (at once if past). */
  resume(owed: OwedReceipt): void {
    const job = this.job({ kind: "receipt", message: owed.message, word: owed.word })
    this.timeline.after(Math.max(0, owed.dueAt - Date.now()), () => this.send(job))
  }

  /** A `deliver_sm_resp` on `c`: the answer to a receipt or an MO; status 0 settles it. */
  answered(c: DeliveryConnection, pdu: smpp.PDU): void {
    const job = c.deliveries.get(pdu.sequence_number)
    if (job === undefined) return
    c.deliveries.delete(pdu.sequence_number)
    const sent = job.sentOn.find(([on, sequence]) => on === c && sequence === pdu.sequence_number)
    if (sent !== undefined) this.host.answerDelays?.[job.kind].push(performance.now() - sent[2])
    if (job.kind === "mo") this.host.mobileOriginatedAnswers.push(pdu.command_status)
    else
      this.host.receiptAnswers.push({
        id: receiptId(this.host.idFormat, job.message.ids[0]!),
        status: pdu.command_status
      })
    if (pdu.command_status === Status.ok && !job.acked) {
      job.acked = true
      if (job.kind === "receipt") this.book.acknowledged(job.message)
    }
    this.drain()
  }

  /** Sends what waits for room while a connection has some (after a bind or an answer). */
  drain(): void {
    while (this.waiting.length > 0 && this.roomAnywhere()) {
      const job = MutableList.take(this.waiting) as DeliveryJob
      job.waiting = false
      this.send(job)
    }
  }

  private job(
    what: { kind: "receipt"; message: KnownMessage; word: "DELIVRD" | "UNDELIV" } | ({ kind: "mo" } & MoDelivery)
  ): DeliveryJob {
    return { ...what, attempts: 0, acked: false, waiting: false, sentOn: [] }
  }

  private pdu(job: DeliveryJob): smpp.PDU {
    if (job.kind === "mo") return moPdu(job)
    const message = job.message
    const state = job.word === "DELIVRD" ? messageState.delivered : messageState.undeliverable
    if (message.state !== state) {
      message.state = state
      this.book.stateChanged(message)
    }
    return receiptPdu(message, job.word, this.host.idFormat, this.host.receiptTlvs)
  }

  private send(job: DeliveryJob): void {
    if (job.acked) return
    for (const [c, sequence] of job.sentOn) c.deliveries.delete(sequence)
    job.sentOn = []
    const c = pickConnection(this.connections)
    if (c === undefined) {
      if (!job.waiting) {
        job.waiting = true
        MutableList.append(this.waiting, job)
      }
      return
    }
    const copies = job.kind === "receipt" && this.host.duplicateReceipts && job.attempts === 0 ? 2 : 1
    for (let i = 0; i < copies; i++) {
      const pdu = this.pdu(job)
      sendPdu(c.session, pdu)
      c.deliveries.set(pdu.sequence_number, job)
      job.sentOn.push([c, pdu.sequence_number, performance.now()])
    }
    if (job.kind === "receipt") this.host.receiptsSent += copies
    job.attempts++
    this.timeline.after(this.retryMs * 2 ** Math.min(job.attempts - 1, 4), () => this.send(job))
  }

  private roomAnywhere(): boolean {
    for (const c of this.connections) if (hasRoom(c)) return true
    return false
  }
}
