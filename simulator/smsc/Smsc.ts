/**
 * The SMSC simulator: a standalone SMPP 3.4 server (the `smpp` package's server) that behaves
 * like an operator's SMSC by recipient (docs/decisions.md#smpp, Behaviour.ts): it binds
 * transceivers, answers `submit_sm` (at once, slowly, late or never), reassembles concatenated
 * messages, answers `query_sm`, and sends delivery receipts again (after `receiptRetryMs`, then
 * with backoff, across reconnections) until a `deliver_sm_resp` with status 0 comes back.
 *
 * Its state lives in memory for as long as the object does, whatever happens to the service's
 * connections or to the listening socket (`stop` / `restart`): it is the provider's side. Given a
 * data directory, what it owes (its ids, the messages `query_sm` knows, the receipts not yet
 * acknowledged) is also kept there (Book.ts), so that a new Smsc on it, in a new process after a
 * kill -9, carries on. Tests drive it through knobs and read what it received and measured.
 *
 * It also speaks for the mobiles (docs/two-way.md#simulators): the replying numbers answer one
 * receipt delay after their delivery receipt, and `sendMobileOriginated` sends an MO on demand, a
 * long text as parts in any of the three forms (MoParts.ts), shuffled and with a part repeated.
 *
 * This file holds the server, its connections and their submissions; the sending again of
 * receipts and MO is Redelivery.ts (a receipt's PDU ReceiptPdu.ts), binds Binds.ts, `query_sm`
 * QuerySm.ts, the reading of a `submit_sm` SubmitSm.ts, the writing of ids IdFormats.ts.
 */
import smpp from "smpp"
import type { MsgIdType } from "../../src/config/SmppSettings.ts"
import { sendPdu } from "../../src/provider/smpp/SendPdu.ts"
import { Status } from "../../src/provider/smpp/Statuses.ts"
import { type Behaviour, behaviourOf } from "./Behaviour.ts"
import { Accounts, bindStatus } from "./Binds.ts"
import { Book } from "./Book.ts"
import { responseId } from "./IdFormats.ts"
import type { KnownMessage, Owed } from "./Entries.ts"
import { queryAnswer } from "./QuerySm.ts"
import { Reassembly } from "./Reassembly.ts"
import { messageState } from "./ReceiptPdu.ts"
import { replyingNumbers } from "../../src/provider/inprocess/ReplyingNumbers.ts"
import { moPdus, type PartForm, shuffled } from "./MoParts.ts"
import { type DeliveryConnection, type ReceiptAnswer, Redelivery } from "./Redelivery.ts"
import { type SmscCounts, StatsFile } from "./Stats.ts"
import { type ReceivedSubmit, readSubmit } from "./SubmitSm.ts"
import { Timeline } from "./Timeline.ts"

export interface SmscOptions {
  /** Address to listen on; `0.0.0.0` inside a container network. */
  readonly host: string
  /** 0 picks a free port (tests). */
  readonly port: number
  readonly systemId: string
  readonly password: string
  /** Delay between taking a message (its answer) and its receipt. */
  readonly receiptDelayMs: number
  /** Answer delay of the slow number. */
  readonly slowMs: number
  /** Answer delay of the late numbers. */
  readonly lateMs: number
  /** First re-send of an unacknowledged receipt; it doubles each time, up to 16 times this. */
  readonly receiptRetryMs: number
  /** Told of binds, refusals and closed connections. */
  readonly log?: (event: string, fields: Readonly<Record<string, string | number>>) => void
  /** Where what it owes is kept across processes (created if missing); none: in memory only. */
  readonly dataDir?: string
}

export const defaultSmscOptions: SmscOptions = {
  host: "127.0.0.1",
  port: 2775,
  systemId: "sim",
  password: "sim",
  receiptDelayMs: 2000,
  slowMs: 3000,
  lateMs: 12_000,
  receiptRetryMs: 5000
}

export type { ReceivedSubmit } from "./SubmitSm.ts"

/** A message the simulator took (every part answered status 0), reassembled. */
export interface SmscMessage extends Omit<ReceivedSubmit, "text" | "concatenation" | "esmClass">, KnownMessage {
  readonly text: string
  readonly parts: number
  /** SMPP message_state: 1 ENROUTE until its receipt, then 2 DELIVERED or 5 UNDELIVERABLE. */
  state: number
}

export type { ReceiptAnswer } from "./Redelivery.ts"

/** An MO to send on demand. */
export interface MobileOriginated {
  /** The mobile it comes from, E.164 with `+`. */
  readonly from: string
  /** The number (E.164 with `+`), short code or sender name it was sent to. */
  readonly to: string
  readonly text: string
  /** How a text longer than one segment is cut into parts (default `udh8`); `payload` sends it whole in `message_payload`. */
  readonly form?: PartForm
  /** Send the parts in a random order. */
  readonly shuffle?: boolean
  /** Send the part at this index (from 0) twice. */
  readonly repeatPart?: number
}

interface Connection extends DeliveryConnection {
  bound: boolean
  /** The account it is bound as, once bound. */
  systemId: string | undefined
  closed: boolean
  /** `submit_sm` received and not answered yet. */
  outstanding: number
}

/** Submissions, messages and ids (for query_sm) kept, at most. */
const keptMax = 200_000

export class Smsc {
  private readonly options: SmscOptions
  private readonly server: smpp.Server
  private readonly timeline = new Timeline()
  private readonly connections = new Set<Connection>()
  private readonly book: Book
  private readonly reassembly = new Reassembly<{ readonly part: ReceivedSubmit; readonly id: number }>(10_000)
  private readonly redelivery: Redelivery
  /** The reference of the next long MO's parts. */
  private moRef = 0
  private readonly arrivals: Array<number> = []
  private arrivalsHead = 0
  private throttleLeft = 0
  private listeningPort: number

  // knobs
  /** Answer every bind with 0x0D ESME_RBINDFAIL. */
  refuseBinds = false
  /** How ids are written in answers and receipts (the `msg_id_type` the adapter must be told). */
  idFormat: MsgIdType = "exact"
  /** Extra delay of every answer the table sends at once (to let a window fill up). */
  responseDelayMs = 0
  /** Whether receipts carry the `receipted_message_id` and `message_state` TLVs besides their text. */
  receiptTlvs = true
  /** Send each receipt twice at its first sending. */
  duplicateReceipts = false
  /** Send a message's receipt before its `submit_sm_resp` (right away, on the same connection). */
  receiptBeforeResponse = false
  /** Answer `enquire_link` (off: a connection that looks alive but is not). */
  answerEnquireLinks = true
  /** Keep receipts as they fall due instead of sending them, until `releaseReceipts` (a bench's burst of receipts). */
  holdReceipts = false
  /** Set to arrays to have each `deliver_sm`'s answer delay (ms) recorded by kind. */
  answerDelays: { readonly receipt: Array<number>; readonly mo: Array<number> } | undefined = undefined
  private readonly heldReceipts: Array<readonly [SmscMessage, "DELIVRD" | "UNDELIV"]> = []

  // what it received and measured
  /** Every `submit_sm` received, oldest first (beyond 200,000, the older half is forgotten). */
  readonly received: Array<ReceivedSubmit> = []
  /** Every message this object took, reassembled, in the order its last part came (beyond 200,000, the older half is forgotten). */
  readonly messages: Array<SmscMessage> = []
  /** Every answer to a receipt, in order. */
  readonly receiptAnswers: Array<ReceiptAnswer> = []
  /** The status of every answer to a mobile-originated message, in order. */
  readonly mobileOriginatedAnswers: Array<number> = []
  /** Receipts sent, copies and re-sends included. */
  receiptsSent = 0
  binds = 0
  bindsRefused = 0
  /** `enquire_link` received. */
  enquireLinks = 0
  /** Most `submit_sm` ever awaiting their answer on one connection. */
  maxOutstanding = 0
  /** Most `submit_sm` received in any 1 s window, over all connections. */
  maxPerSecond = 0
  /** Every `submit_sm` received. */
  submits = 0
  /** Binds per account (system_id): bound now, and the most ever bound at once. */
  private readonly accounts = new Accounts()
  private readonly stats: StatsFile

  private constructor(options: SmscOptions, book: Book) {
    this.options = options
    this.book = book
    this.redelivery = new Redelivery(this, this.connections, this.timeline, book, options.receiptRetryMs)
    this.listeningPort = options.port
    this.server = smpp.createServer({}, (session) => this.accept(session))
    this.stats = new StatsFile(options.dataDir, () => this.counts)
  }

  /** Starts a simulator listening on `options.port` (0: a free one), owing the receipts its data directory says it owes. */
  static async start(options: Partial<SmscOptions> = {}): Promise<Smsc> {
    const all = { ...defaultSmscOptions, ...options }
    const book = Book.open(all.dataDir, keptMax)
    const smsc = new Smsc(all, book)
    try {
      await smsc.listen()
    } catch (e) {
      book.close()
      throw e
    }
    for (const owed of book.receiptsOwed) smsc.redelivery.resume(owed)
    return smsc
  }

  /** Receipts owed and not yet answered with status 0. */
  get receiptsOwed(): number {
    return this.book.receiptsOwed.length
  }

  /** The port it listens (or listened) on. */
  get port(): number {
    return this.listeningPort
  }

  /** `smpp://<system_id>:<password>@127.0.0.1:<port>` with its credentials, or others. */
  url(systemId = this.options.systemId, password = this.options.password): string {
    return `smpp://${encodeURIComponent(systemId)}:${encodeURIComponent(password)}@127.0.0.1:${this.port}`
  }

  /** Stops listening and closes every connection; what it took and owes (receipts) is kept. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      for (const c of this.connections) c.session.destroy()
    })
  }

  /** Listens again on the same port after `stop`. */
  restart(): Promise<void> {
    return this.listen()
  }

  /** Stops and forgets every pending answer and receipt (end of a test); its data directory keeps what it owes. */
  async dispose(): Promise<void> {
    this.timeline.clear()
    await this.stop()
    this.stats.close()
    this.book.close()
  }

  /** Closes every connection now (the server keeps listening). */
  dropConnections(): void {
    for (const c of this.connections) c.session.destroy()
  }

  /** Sends every receipt kept while `holdReceipts` was on, at once; how many. */
  releaseReceipts(): number {
    const held = this.heldReceipts.splice(0)
    for (const [message, word] of held) this.redelivery.receipt(message, word)
    return held.length
  }

  /** Answers the next `n` submit_sm with 0x58 ESME_RTHROTTLED, whatever their recipient. */
  throttleNext(n: number): void {
    this.throttleLeft = n
  }

  /**
   * Sends a mobile-originated message (`deliver_sm` that are no receipt): each part on a bound
   * connection now or as soon as one has room, and again until answered with status 0. Returns
   * how many `deliver_sm` it makes (a repeated part counted twice).
   */
  sendMobileOriginated(mo: MobileOriginated): number {
    this.moRef = (this.moRef + 1) % 65_536
    const pdus = moPdus(mo.text, mo.form ?? "udh8", this.moRef)
    const repeated = mo.repeatPart === undefined ? undefined : pdus[mo.repeatPart]
    const parts = repeated === undefined ? pdus : [...pdus, repeated]
    const order = mo.shuffle === true ? shuffled(parts, Math.random) : parts
    for (const pdu of order) this.redelivery.mobileOriginated({ from: mo.from, to: mo.to, pdu })
    return order.length
  }

  /** How many `submit_sm` carried this exact text (one part's text, or a whole single-part message's). */
  submitsOfText(text: string): number {
    return this.received.reduce((n, r) => (r.text === text ? n + 1 : n), 0)
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject)
      this.server.listen(this.listeningPort, this.options.host, () => {
        this.server.off("error", reject)
        const address = this.server.address()
        if (address !== null && typeof address === "object") this.listeningPort = address.port
        resolve()
      })
    })
  }

  private accept(session: smpp.Session): void {
    session.socket.setNoDelay(true)
    const c: Connection = {
      session,
      bound: false,
      systemId: undefined,
      closed: false,
      outstanding: 0,
      deliveries: new Map()
    }
    this.connections.add(c)
    session.on("pdu", (pdu) => this.receive(c, pdu))
    session.on("error", () => session.destroy())
    session.on("close", () => {
      c.closed = true
      if (c.bound) this.unbound(c)
      c.bound = false
      c.deliveries.clear()
      this.connections.delete(c)
      this.options.log?.("connection closed", {})
    })
  }

  private receive(c: Connection, pdu: smpp.PDU): void {
    switch (pdu.command) {
      case "bind_transceiver":
        return this.bind(c, pdu)
      case "submit_sm":
        return c.bound ? this.submit(c, pdu) : this.answer(c, pdu, Status.invalidBindStatus)
      case "query_sm":
        return c.bound ? this.query(c, pdu) : this.answer(c, pdu, Status.invalidBindStatus)
      case "deliver_sm_resp":
        return this.redelivery.answered(c, pdu)
      case "enquire_link":
        this.enquireLinks++
        return this.answerEnquireLinks ? this.answer(c, pdu, Status.ok) : undefined
      case "unbind":
        this.answer(c, pdu, Status.ok)
        return c.session.close()
      default:
        if (!pdu.isResponse()) this.answer(c, pdu, Status.invalidCommand)
    }
  }

  private answer(c: Connection, pdu: smpp.PDU, status: number, fields: smpp.PduOptions = {}): void {
    if (!c.closed) sendPdu(c.session, pdu.response({ ...fields, command_status: status }))
  }

  private bind(c: Connection, pdu: smpp.PDU): void {
    const status = bindStatus(pdu, c.bound, this.refuseBinds, this.options)
    this.answer(c, pdu, status, { system_id: "SMSCSIM" })
    if (status !== Status.ok) {
      this.bindsRefused++
      this.options.log?.("bind refused", { system_id: pdu.system_id ?? "", status })
      return
    }
    c.bound = true
    c.systemId = pdu.system_id ?? ""
    this.binds++
    const bindsNow = this.accounts.bound(c.systemId)
    this.stats.changed(true)
    this.options.log?.("bound", { system_id: c.systemId, binds_now: bindsNow })
    this.redelivery.drain()
  }

  /** A bound connection ends (unbind, close, or the peer gone): one bind fewer for its account. */
  private unbound(c: Connection): void {
    this.accounts.unbound(c.systemId ?? "")
    this.stats.changed(true)
  }

  /** Binds per account (now, and the most ever at once) and the most `submit_sm` in any 1 s window: what `stats.json` holds. */
  get counts(): SmscCounts {
    return {
      binds: this.accounts.counts,
      maxSubmitsPerSecond: this.maxPerSecond,
      submits: this.submits
    }
  }

  private measureArrival(c: Connection): void {
    c.outstanding++
    this.maxOutstanding = Math.max(this.maxOutstanding, c.outstanding)
    const now = performance.now()
    this.arrivals.push(now)
    while (this.arrivals[this.arrivalsHead]! <= now - 1000) this.arrivalsHead++
    this.submits++
    const inLastSecond = this.arrivals.length - this.arrivalsHead
    this.maxPerSecond = Math.max(this.maxPerSecond, inLastSecond)
    this.stats.changed(false)
    if (this.arrivalsHead > 4096) {
      this.arrivals.splice(0, this.arrivalsHead)
      this.arrivalsHead = 0
    }
  }

  private submit(c: Connection, pdu: smpp.PDU): void {
    this.measureArrival(c)
    const part = readSubmit(pdu)
    this.received.push(part)
    if (this.received.length > keptMax) this.received.splice(0, keptMax / 2)
    let behaviour: Behaviour = behaviourOf(part.to)
    if (this.throttleLeft > 0) {
      this.throttleLeft--
      behaviour = { status: Status.throttled, answer: "now", receipt: "none" }
    }
    if (behaviour.answer === "never") return
    const delayMs =
      behaviour.answer === "slow"
        ? this.options.slowMs
        : behaviour.answer === "late"
          ? this.options.lateMs
          : this.responseDelayMs
    const id = behaviour.status === Status.ok ? this.book.newId() : undefined
    const owed: Owed | undefined =
      behaviour.receipt === "none"
        ? undefined
        : {
            word: behaviour.receipt,
            dueAt: Date.now() + (this.receiptBeforeResponse ? 0 : delayMs + this.options.receiptDelayMs)
          }
    const message = id === undefined ? undefined : this.take(part, id, owed)
    const respond = (): void => {
      const receipt = message !== undefined && behaviour.receipt !== "none" ? behaviour.receipt : undefined
      if (receipt !== undefined && this.receiptBeforeResponse) this.redelivery.receipt(message!, receipt)
      else if (receipt !== undefined)
        this.timeline.after(this.options.receiptDelayMs, () =>
          this.holdReceipts ? this.heldReceipts.push([message!, receipt]) : this.redelivery.receipt(message!, receipt)
        )
      if (receipt === "DELIVRD") this.replyLater(message!)
      if (c.closed) return
      c.outstanding--
      this.answer(c, pdu, behaviour.status, { message_id: id === undefined ? "" : responseId(this.idFormat, id) })
    }
    if (delayMs === 0) respond()
    else this.timeline.after(delayMs, respond)
  }

  /** Records a taken part under its id; the message once all its parts are taken (and the receipt it owes). */
  private take(part: ReceivedSubmit, id: number, owed: Owed | undefined): SmscMessage | undefined {
    const key = `${part.from}|${part.to}|${part.concatenation?.ref}`
    const parts =
      part.concatenation === undefined ? [{ part, id }] : this.reassembly.add(key, part.concatenation, { part, id })
    if (parts === undefined) return undefined
    const { text: _text, concatenation: _c, esmClass: _e, ...first } = parts[0]!.part
    const message: SmscMessage = {
      ...first,
      ids: parts.map((p) => p.id),
      text: parts.map((p) => p.part.text).join(""),
      parts: parts.length,
      state: messageState.enroute
    }
    this.book.taken(message, owed)
    this.messages.push(message)
    if (this.messages.length > keptMax) this.messages.splice(0, keptMax / 2)
    return message
  }

  /** A replying number's answer to the sender of `message`, one receipt delay after its receipt (docs/two-way.md#simulators). */
  private replyLater(message: SmscMessage): void {
    const text = replyingNumbers[message.to]
    if (text === undefined) return
    const receiptAfterMs = this.receiptBeforeResponse ? 0 : this.options.receiptDelayMs
    this.timeline.after(receiptAfterMs + this.options.receiptDelayMs, () =>
      this.sendMobileOriginated({
        from: message.to,
        // a short code is answered as one, whatever type of number the submission gave it
        to: message.sourceTon === 1 && !/^\d{3,8}$/.test(message.from) ? `+${message.from}` : message.from,
        text
      })
    )
  }

  private query(c: Connection, pdu: smpp.PDU): void {
    const { status, fields } = queryAnswer(pdu, this.idFormat, (id) => this.book.find(id))
    this.answer(c, pdu, status, fields)
  }
}
