/**
 * The SMSC simulator's delivery receipts, sent until answered: a receipt goes on a bound
 * connection with room in its window (taken in turn), and is sent again `receiptRetryMs` later,
 * then after a gap doubling up to 16 times that, on whatever connection is bound then (across
 * reconnections), until a `deliver_sm_resp` with status 0 comes back; while no connection has
 * room it waits, and goes as soon as one has (a bind, an answer). The receipts owed are kept in
 * the Book, so that a simulator started again on its data directory carries on.
 */
import { MutableList } from "effect"
import type smpp from "smpp"
import type { MsgIdType } from "../../src/config/SmppSettings.ts"
import { sendPdu } from "../../src/provider/smpp/SendPdu.ts"
import { Status } from "../../src/provider/smpp/Statuses.ts"
import type { Book, OwedReceipt } from "./Book.ts"
import { receiptId } from "./IdFormats.ts"
import type { KnownMessage } from "./Journal.ts"
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
  /** Receipts (or mobile-originated messages, without a job) sent on it and not answered yet, by sequence number. */
  readonly deliveries: Map<number, ReceiptJob | undefined>
}

/** One receipt owed, until it is answered with status 0. */
export interface ReceiptJob {
  readonly message: KnownMessage
  readonly word: "DELIVRD" | "UNDELIV"
  attempts: number
  acked: boolean
  waiting: boolean
  /** Where its last copies went, so that a re-send frees their place. */
  sentOn: Array<readonly [DeliveryConnection, number]>
}

/** Receipts awaiting their answer on one connection, at most (an SMSC's window). */
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
}

export class ReceiptRedelivery {
  private readonly host: RedeliveryHost
  private readonly connections: Set<DeliveryConnection>
  private readonly timeline: Timeline
  private readonly book: Book
  /** First re-send of an unacknowledged receipt; it doubles each time, up to 16 times this. */
  private readonly retryMs: number
  /** Receipts due while no connection had room, in order. */
  private readonly waiting = MutableList.make<ReceiptJob>()

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
  send(message: KnownMessage, word: "DELIVRD" | "UNDELIV"): void {
    this.sendReceipt(this.receiptJob(message, word))
  }

  /** A receipt an earlier simulator on the data directory owed: sent when it was due (at once if past). */
  resume(owed: OwedReceipt): void {
    const job = this.receiptJob(owed.message, owed.word)
    this.timeline.after(Math.max(0, owed.dueAt - Date.now()), () => this.sendReceipt(job))
  }

  /** A `deliver_sm_resp` on `c`: the answer to a receipt (status 0: it is acknowledged) or to a mobile-originated message. */
  answered(c: DeliveryConnection, pdu: smpp.PDU): void {
    if (!c.deliveries.has(pdu.sequence_number)) return
    const job = c.deliveries.get(pdu.sequence_number)
    c.deliveries.delete(pdu.sequence_number)
    if (job === undefined) {
      this.host.mobileOriginatedAnswers.push(pdu.command_status)
      return this.drain()
    }
    this.host.receiptAnswers.push({
      id: receiptId(this.host.idFormat, job.message.ids[0]!),
      status: pdu.command_status
    })
    if (pdu.command_status === Status.ok) {
      job.acked = true
      this.book.acknowledged(job.message)
    }
    this.drain()
  }

  /** Sends the receipts waiting for room while a connection has some (after a bind or an answer). */
  drain(): void {
    while (this.waiting.length > 0 && this.roomAnywhere()) {
      const job = MutableList.take(this.waiting) as ReceiptJob
      job.waiting = false
      this.sendReceipt(job)
    }
  }

  private receiptJob(message: KnownMessage, word: "DELIVRD" | "UNDELIV"): ReceiptJob {
    return { message, word, attempts: 0, acked: false, waiting: false, sentOn: [] }
  }

  private sendReceipt(job: ReceiptJob): void {
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
    const message = job.message
    const state = job.word === "DELIVRD" ? messageState.delivered : messageState.undeliverable
    if (message.state !== state) {
      message.state = state
      this.book.stateChanged(message)
    }
    const copies = this.host.duplicateReceipts && job.attempts === 0 ? 2 : 1
    for (let i = 0; i < copies; i++) {
      const pdu = receiptPdu(job.message, job.word, this.host.idFormat, this.host.receiptTlvs)
      sendPdu(c.session, pdu)
      c.deliveries.set(pdu.sequence_number, job)
      job.sentOn.push([c, pdu.sequence_number])
    }
    this.host.receiptsSent += copies
    job.attempts++
    this.timeline.after(this.retryMs * 2 ** Math.min(job.attempts - 1, 4), () => this.sendReceipt(job))
  }

  private roomAnywhere(): boolean {
    for (const c of this.connections) if (hasRoom(c)) return true
    return false
  }
}
