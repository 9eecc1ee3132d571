/**
 * A raw SMSC for tests: a TCP server speaking just enough SMPP 3.4 to bind the adapter, answer
 * its `enquire_link` and `submit_sm` (status 0 and ids from a counter unless a test says
 * otherwise), and record everything it is sent, while a test makes it send whatever a real,
 * restarting or hostile SMSC sends: PDUs built with the `smpp` package, or raw octets no SMSC
 * should send, several in one TCP write.
 */
import { createServer, type Server, type Socket } from "node:net"
import smpp from "smpp"

/** How the raw SMSC answers one `submit_sm`: a status and an id, or nothing at all. */
export type SubmitAnswer = { readonly status: number; readonly messageId: string } | "silent"

export interface RawConnection {
  readonly socket: Socket
  /** Every PDU the adapter sent on it, decoded. */
  readonly received: Array<smpp.PDU>
  bound: boolean
  closed: boolean
  /** When it was accepted, and when it closed (epoch ms). */
  readonly openedAt: number
  closedAt: number | undefined
}

export interface ReceiptOptions {
  readonly id: string
  /** The `stat:` word; a word no SMSC writes has no `message_state` TLV. */
  readonly stat?: string
  /** The number it is about, as `source_addr` (E.164 with or without `+`). */
  readonly source: string
  /** `YYMMDDhhmm` dates of the text; default now. */
  readonly submitDate?: string
  readonly doneDate?: string
  /** The text in `message_payload` rather than `short_message`. */
  readonly inPayload?: boolean
  /** Sent as a `data_sm` rather than a `deliver_sm`. */
  readonly dataSm?: boolean
  /** UCS-2 (data_coding 8) instead of GSM-7; the id may then hold any character. */
  readonly ucs2?: boolean
  /** The receipted_message_id and message_state TLVs beside the text (default false). */
  readonly tlvs?: boolean
}

/** `YYMMDDhhmm` of a date, in UTC, as receipts write them. */
export const receiptDate = (d: Date): string =>
  d.toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d).*$/, "$1$2$3$4$5")

const states: Readonly<Record<string, number>> = {
  ENROUTE: 1,
  DELIVRD: 2,
  EXPIRED: 3,
  UNDELIV: 5,
  ACCEPTD: 6,
  UNKNOWN: 7
}

/** A delivery receipt as an SMSC writes it. */
export const receiptPdu = (o: ReceiptOptions): smpp.PDU => {
  const stat = o.stat ?? "DELIVRD"
  const now = receiptDate(new Date())
  const text = `id:${o.id} sub:001 dlvrd:${stat === "DELIVRD" ? "001" : "000"} submit date:${o.submitDate ?? now} done date:${o.doneDate ?? now} stat:${stat} err:000 text:`
  const body = o.ucs2 ? Buffer.from(text, "utf16le").swap16() : Buffer.from(text, "latin1")
  const fields: smpp.PduOptions = {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: o.source.replace(/^\+/, ""),
    dest_addr_ton: 5,
    dest_addr_npi: 0,
    destination_addr: "DEMO",
    esm_class: 0x04,
    data_coding: o.ucs2 ? 8 : 0,
    ...(o.inPayload || o.dataSm ? { short_message: Buffer.alloc(0), message_payload: body } : { short_message: body }),
    ...(o.tlvs
      ? { receipted_message_id: o.id, ...(states[stat] === undefined ? {} : { message_state: states[stat] }) }
      : {})
  }
  if (!o.dataSm) return new smpp.PDU("deliver_sm", fields)
  const { short_message: _s, ...dataSm } = fields
  return new smpp.PDU("data_sm", dataSm)
}

/** Octets of a PDU header with any fields, and an optional body. */
export const rawPdu = (
  commandId: number,
  sequence: number,
  body: Buffer = Buffer.alloc(0),
  commandLength = 16 + body.length,
  status = 0
): Buffer => {
  const head = Buffer.alloc(16)
  head.writeUInt32BE(commandLength >>> 0, 0)
  head.writeUInt32BE(commandId >>> 0, 4)
  head.writeUInt32BE(status >>> 0, 8)
  head.writeUInt32BE(sequence >>> 0, 12)
  return Buffer.concat([head, body])
}

export class RawSmsc {
  private readonly server: Server
  readonly connections: Array<RawConnection> = []
  /** The id the next answered `submit_sm` gets (set it back to replay ids, as a restarted SMSC does). */
  nextId = 1
  /** How to answer a `submit_sm`; default status 0 with the next id. */
  onSubmit: (pdu: smpp.PDU, connection: RawConnection) => SubmitAnswer = () => ({
    status: 0,
    messageId: String(this.nextId++)
  })
  /** Told of every PDU the adapter sends, once it is handled. */
  onReceived: (pdu: smpp.PDU, connection: RawConnection) => void = () => undefined
  private sequence = 0x10000

  private constructor() {
    this.server = createServer((socket) => this.accept(socket))
  }

  /** Listens on `port` (0: a free one). */
  static async start(port = 0): Promise<RawSmsc> {
    const smsc = new RawSmsc()
    await new Promise<void>((resolve, reject) => {
      smsc.server.once("error", reject)
      smsc.server.listen(port, "127.0.0.1", resolve)
    })
    return smsc
  }

  get port(): number {
    const address = this.server.address()
    return typeof address === "object" && address !== null ? address.port : 0
  }

  /** `smpp://sim:sim@127.0.0.1:<port>`. */
  get url(): string {
    return `smpp://sim:sim@127.0.0.1:${this.port}`
  }

  /** Bound connections so far. */
  get binds(): number {
    return this.connections.filter((c) => c.bound).length
  }

  /** The latest connection, bound and open; throws when there is none. */
  get current(): RawConnection {
    const c = this.connections.findLast((x) => x.bound && !x.closed)
    if (c === undefined) throw new Error("no bound connection")
    return c
  }

  /** Every PDU received on every connection, oldest first. */
  get received(): ReadonlyArray<smpp.PDU> {
    return this.connections.flatMap((c) => c.received)
  }

  /** Sends a request PDU (numbered here) or raw octets on the current connection; several at once leave in one write. */
  send(...items: ReadonlyArray<smpp.PDU | Buffer>): ReadonlyArray<number> {
    return this.sendOn(this.current, items)
  }

  /** Sends on `connection` as `send` does on the current one (nothing when it is closed). */
  sendOn(connection: RawConnection, items: ReadonlyArray<smpp.PDU | Buffer>): ReadonlyArray<number> {
    const sequences: Array<number> = []
    const octets = items.map((item) => {
      if (Buffer.isBuffer(item)) return item
      if (!item.isResponse() && item.sequence_number === 0) item.sequence_number = this.nextSequence()
      sequences.push(item.sequence_number)
      return item.toBuffer()
    })
    if (!connection.closed) connection.socket.write(Buffer.concat(octets))
    return sequences
  }

  /** A sequence number for a request of ours never used before (for raw octets). */
  nextSequence(): number {
    return ++this.sequence
  }

  /** The answers the adapter gave to these sequence numbers (requests of ours), in order of arrival. */
  answersTo(sequences: ReadonlyArray<number>): ReadonlyArray<smpp.PDU> {
    const wanted = new Set(sequences)
    return this.received.filter((p) => p.isResponse() && wanted.has(p.sequence_number))
  }

  /** Closes every connection (the server keeps listening). */
  dropConnections(): void {
    for (const c of this.connections) c.socket.destroy()
  }

  async close(): Promise<void> {
    this.dropConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true)
    const c: RawConnection = {
      socket,
      received: [],
      bound: false,
      closed: false,
      openedAt: Date.now(),
      closedAt: undefined
    }
    this.connections.push(c)
    let buffered = Buffer.alloc(0)
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length >= 16 && buffered.length >= buffered.readUInt32BE(0)) {
        const length = buffered.readUInt32BE(0)
        const frame = buffered.subarray(0, length)
        buffered = buffered.subarray(length)
        this.receive(c, new smpp.PDU(Buffer.from(frame)))
      }
    })
    socket.on("error", () => socket.destroy())
    socket.on("close", () => {
      c.closed = true
      c.closedAt = Date.now()
    })
  }

  private answer(c: RawConnection, pdu: smpp.PDU, status: number, fields: smpp.PduOptions = {}): void {
    if (!c.closed) c.socket.write(pdu.response({ ...fields, command_status: status }).toBuffer())
  }

  private receive(c: RawConnection, pdu: smpp.PDU): void {
    c.received.push(pdu)
    this.answerRequest(c, pdu)
    this.onReceived(pdu, c)
  }

  private answerRequest(c: RawConnection, pdu: smpp.PDU): void {
    switch (pdu.command) {
      case "bind_transceiver":
        c.bound = true
        return this.answer(c, pdu, 0, { system_id: "RAWSMSC" })
      case "enquire_link":
      case "unbind":
        return this.answer(c, pdu, 0)
      case "submit_sm": {
        const answer = this.onSubmit(pdu, c)
        if (answer !== "silent") this.answer(c, pdu, answer.status, { message_id: answer.messageId })
      }
    }
  }
}
