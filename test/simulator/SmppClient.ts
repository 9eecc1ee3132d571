/**
 * A bare SMPP client for tests of the SMSC simulator on its own (no adapter): binds, submits,
 * queries, and keeps the receipts it gets, answering them with status 0 unless told not to.
 */
import smpp from "smpp"

export interface Receipt {
  readonly id: string
  readonly stat: string
}

export class SmppClient {
  private readonly session: smpp.Session
  private readonly waiting = new Map<number, (pdu: smpp.PDU) => void>()
  /** Every receipt received, repeats included. */
  readonly receipts: Array<Receipt> = []
  /** Answer receipts with status 0 (off: leave them unanswered, so that they stay owed). */
  acknowledge = true

  private constructor(session: smpp.Session) {
    this.session = session
    session.on("error", () => session.destroy())
    session.on("pdu", (pdu) => {
      if (pdu.isResponse()) {
        this.waiting.get(pdu.sequence_number)?.(pdu)
        this.waiting.delete(pdu.sequence_number)
      } else if (pdu.command === "deliver_sm") {
        const short = pdu.short_message
        const text = short === undefined || Buffer.isBuffer(short) ? String(short ?? "") : String(short.message)
        this.receipts.push({ id: /id:(\S+)/.exec(text)?.[1] ?? "", stat: /stat:(\S+)/.exec(text)?.[1] ?? "" })
        if (this.acknowledge) session.send(pdu.response({ command_status: 0 }))
      }
    })
  }

  /** Connects to 127.0.0.1:`port` and binds as sim / sim; rejects if either fails. */
  static async bound(port: number): Promise<SmppClient> {
    const session = await new Promise<smpp.Session>((resolve, reject) => {
      const s = smpp.connect({ host: "127.0.0.1", port }, () => resolve(s))
      s.once("error", reject)
    })
    const client = new SmppClient(session)
    const bind = await client.request(
      new smpp.PDU("bind_transceiver", { system_id: "sim", password: "sim", interface_version: 0x34 })
    )
    if (bind.command_status !== 0) throw new Error(`bind refused: ${bind.command_status}`)
    return client
  }

  /** Submits a one-part text to `to` (E.164); its status and id. */
  async submit(to: string): Promise<{ readonly status: number; readonly id: string }> {
    const answer = await this.request(
      new smpp.PDU("submit_sm", {
        source_addr_ton: 5,
        source_addr_npi: 0,
        source_addr: "TEST",
        dest_addr_ton: 1,
        dest_addr_npi: 1,
        destination_addr: to.replace(/^\+/, ""),
        registered_delivery: 1,
        data_coding: 0,
        short_message: Buffer.from("hello", "ascii")
      })
    )
    return { status: answer.command_status, id: answer.message_id ?? "" }
  }

  /** `query_sm` for an id: its status and message_state. */
  async query(id: string): Promise<{ readonly status: number; readonly state: number | undefined }> {
    const answer = await this.request(
      new smpp.PDU("query_sm", { message_id: id, source_addr_ton: 5, source_addr_npi: 0, source_addr: "TEST" })
    )
    return { status: answer.command_status, state: answer.message_state }
  }

  close(): void {
    this.session.destroy()
  }

  private request(pdu: smpp.PDU): Promise<smpp.PDU> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${pdu.command}`)), 5000)
      if (!this.session.send(pdu)) {
        clearTimeout(timer)
        return reject(new Error("not connected"))
      }
      this.waiting.set(pdu.sequence_number, (answer) => {
        clearTimeout(timer)
        resolve(answer)
      })
    })
  }
}
