/**
 * The SMSC of the SMPP fuzz, over a RawSmsc: it answers each `submit_sm`, at once or up to 0.4 s
 * later (most normally, some with an id the adapter cannot keep, a few refused, some after a
 * response of the wrong command carrying the same sequence number), owes a valid receipt for
 * each message it took under a usable id and sends it (in short_message or message_payload,
 * deliver_sm or data_sm, GSM or UCS-2, with or without TLVs, sometimes after an ENROUTE one or
 * twice) until it is answered with status 0, as real SMSCs do; and every `tick` writes, in one
 * TCP write, the receipts due mixed with junk (Junk.ts) and, while `killing`, now and then a PDU
 * that drops the connection. It records every request it sent with the answer owed, and every
 * answer, for the verdict.
 */
import type smpp from "smpp"
import { type RawConnection, RawSmsc, receiptDate, receiptPdu } from "../../support/RawSmsc.ts"
import { desyncFlood, type Expectation, type Item, type Killer, makeJunk, wrongAnswerTo } from "./Junk.ts"
import type { Prng } from "./Prng.ts"

/** How the SMSC answered the submit_sm of one number. */
export interface Submit {
  readonly to: string
  readonly connection: RawConnection
  readonly at: number
  readonly answer: "accepted" | "refused" | "unusable id"
  /** The message_id written in the answer. */
  readonly messageId: string
  /** The final state of the receipt owed (accepted only). */
  readonly stat: "DELIVRD" | "UNDELIV" | undefined
  /** The wrong-command response sent just before the answer, if any. */
  readonly wrongFirst: string | undefined
}

/** A request of ours and the answers it got. */
interface Sent {
  readonly label: string
  readonly connection: RawConnection
  readonly sequence: number
  readonly expect: Expectation
  readonly sentAt: number
  /** After a PDU that drops the connection, in the same write. */
  readonly doomed: boolean
  readonly answers: Array<smpp.PDU>
  readonly onAnswer: ((pdu: smpp.PDU) => void) | undefined
}

interface Owed {
  readonly submit: Submit
  dueAt: number
  acked: boolean
  /** Its copies sent so far. */
  readonly copies: Array<Sent>
  readonly format: {
    readonly inPayload: boolean
    readonly dataSm: boolean
    readonly ucs2: boolean
    readonly tlvs: boolean
  }
  /** An ENROUTE receipt before the final one, and the final one twice, at its first sending. */
  readonly enrouteFirst: boolean
  readonly twice: boolean
}

/**
 * Ids the adapter cannot keep: empty, over 65 characters, a control character, a non-ASCII octet
 * (é, 0xe9: the `smpp` package would read it as `i` without the adapter's latin1 reading), a space.
 */
const unusableIds = (n: number): ReadonlyArray<string> => [
  "",
  "6".repeat(66),
  "9".repeat(5000),
  `12\u0001${n}`,
  `é${n}`,
  `a ${n}`
]
/** The longest usable ids: 64 and 65 characters. */
const longIds = (n: number): ReadonlyArray<string> => [String(n).padStart(64, "L"), String(n).padStart(65, "L")]

const killersOrder: ReadonlyArray<Killer> = [
  "under 16 octets",
  "over 16384 octets",
  "longer than what follows",
  "unbind"
]

export class HostileSmsc {
  readonly raw: RawSmsc
  private readonly prng: Prng
  private readonly junk: ReturnType<typeof makeJunk>
  /** Every submit_sm received, by number (more than one for a number is a resubmission). */
  readonly submits = new Map<string, Array<Submit>>()
  private readonly owed = new Map<string, Owed>()
  /** Receipts with the unusable id of their message, sent once. */
  private readonly unusableReceipts: Array<Submit> = []
  private readonly sent = new Map<number, Sent>()
  /** Connections dropped by a killer: when, and how. */
  readonly killed = new Map<RawConnection, { readonly at: number; readonly how: Killer }>()
  /** Items written, per label. */
  readonly written = new Map<string, number>()
  /** Submits taken whose answer was due after their connection had closed. */
  answersNeverWritten = 0
  /** Answers of the adapter to no request of ours (it answers the garbage it frames after a PDU longer than what follows). */
  answersToNothing = 0
  /** Whether ticks may drop the connection. */
  killing = true
  private nextKillAt = 0
  private killerTurn = 0
  private nextId = 1

  private constructor(raw: RawSmsc, prng: Prng) {
    this.raw = raw
    this.prng = prng
    this.junk = makeJunk(prng, () => raw.nextSequence())
    raw.onSubmit = (pdu, c) => this.answerSubmit(pdu, c)
    raw.onReceived = (pdu, c) => this.received(pdu, c)
    this.nextKillAt = Date.now() + 2000
  }

  static async start(prng: Prng): Promise<HostileSmsc> {
    return new HostileSmsc(await RawSmsc.start(), prng)
  }

  /** The kinds of junk there are (each must be drawn in a run). */
  get junkLabels(): ReadonlyArray<string> {
    return this.junk.menu.map((kind) => kind.label)
  }

  /** Receipts owed and not acknowledged yet. */
  get owedLeft(): number {
    return [...this.owed.values()].filter((o) => !o.acked).length
  }

  /** Receipts owed in all. */
  get owedCount(): number {
    return this.owed.size
  }

  /** Copies of owed receipts sent. */
  get receiptCopies(): number {
    return [...this.owed.values()].reduce((n, o) => n + o.copies.length, 0)
  }

  /** Answers 0x64 to owed receipts (the adapter holding too many at once). */
  get receiptsDeferred(): number {
    return [...this.owed.values()].reduce(
      (n, o) => n + o.copies.filter((s) => s.answers[0]?.command_status === 0x64).length,
      0
    )
  }

  /** Requests of ours not answered yet that must be. */
  get answersOwed(): number {
    return [...this.sent.values()].filter((s) => s.answers.length === 0 && s.expect.kind !== "none" && !this.excused(s))
      .length
  }

  private answerSubmit(pdu: smpp.PDU, c: RawConnection) {
    const to = `+${pdu.destination_addr}`
    const n = this.nextId++
    const roll = this.prng.next()
    const answer: Submit["answer"] = roll < 0.03 ? "refused" : roll < 0.09 ? "unusable id" : "accepted"
    const messageId =
      answer === "unusable id"
        ? this.prng.pick(unusableIds(n))
        : answer === "refused"
          ? ""
          : roll < 0.13
            ? this.prng.pick(longIds(n))
            : String(n)
    const wrongFirst = this.prng.chance(0.05) ? wrongAnswerTo(this.prng, pdu.sequence_number) : undefined
    if (wrongFirst !== undefined) this.raw.sendOn(c, [wrongFirst])
    const submit: Submit = {
      to,
      connection: c,
      at: Date.now(),
      answer,
      messageId,
      stat: answer === "accepted" ? (this.prng.chance(0.85) ? "DELIVRD" : "UNDELIV") : undefined,
      wrongFirst: wrongFirst?.command
    }
    this.submits.set(to, [...(this.submits.get(to) ?? []), submit])
    if (answer === "accepted") {
      const ucs2 = this.prng.chance(0.2)
      this.owed.set(to, {
        submit,
        dueAt: Date.now() + this.prng.int(200, 3000),
        acked: false,
        copies: [],
        // UCS-2 doubles the text: a long id's no longer fits short_message
        format: {
          inPayload: ucs2 || this.prng.chance(0.25),
          dataSm: this.prng.chance(0.15),
          ucs2,
          tlvs: this.prng.chance(0.5)
        },
        enrouteFirst: this.prng.chance(0.15),
        twice: this.prng.chance(0.1)
      })
    }
    if (answer === "unusable id") this.unusableReceipts.push(submit)
    const status = answer === "refused" ? 0x45 : 0
    if (this.prng.chance(0.7)) return { status, messageId }
    // answered a little later: a connection dropped meanwhile loses the answer of a message taken
    setTimeout(
      () => {
        if (c.closed) this.answersNeverWritten++
        else this.raw.sendOn(c, [pdu.response({ command_status: status, message_id: messageId })])
      },
      this.prng.int(50, 400)
    )
    return "silent" as const
  }

  private received(pdu: smpp.PDU, c: RawConnection) {
    if (!pdu.isResponse()) return
    const sent = this.sent.get(pdu.sequence_number)
    if (sent === undefined || sent.connection !== c) {
      this.answersToNothing++
      return
    }
    sent.answers.push(pdu)
    sent.onAnswer?.(pdu)
  }

  /** The connection to write on: the newest bound one no killer was sent on. */
  private target(): RawConnection | undefined {
    return this.raw.connections.findLast((c) => c.bound && !c.closed && !this.killed.has(c))
  }

  /** Whether an unanswered request may stay so: its connection was dropped soon after it was sent (or it came after the killer). */
  private excused(s: Sent, graceMs = 10_000): boolean {
    const killed = this.killed.get(s.connection)
    return s.doomed || (killed !== undefined && s.sentAt >= killed.at - graceMs)
  }

  private receiptItems(o: Owed): Array<Item & { readonly owed?: Owed }> {
    const { submit, format } = o
    const first = o.copies.length === 0
    const options = { id: submit.messageId, source: submit.to, submitDate: receiptDate(new Date(submit.at)), ...format }
    const final = () => {
      const pdu = receiptPdu({ ...options, stat: submit.stat! })
      pdu.sequence_number = this.raw.nextSequence()
      return {
        label: "owed receipt",
        octets: pdu.toBuffer(),
        request: {
          sequence: pdu.sequence_number,
          expect: { kind: "answer", command: `${pdu.command}_resp`, statuses: [0, 0x64] } as const
        },
        owed: o
      }
    }
    const items: Array<Item & { readonly owed?: Owed }> = []
    if (first && o.enrouteFirst) {
      const pdu = receiptPdu({ ...options, stat: "ENROUTE" })
      pdu.sequence_number = this.raw.nextSequence()
      items.push({
        label: "owed receipt ENROUTE",
        octets: pdu.toBuffer(),
        request: {
          sequence: pdu.sequence_number,
          expect: { kind: "answer", command: `${pdu.command}_resp`, statuses: [0] }
        }
      })
    }
    items.push(final())
    if (first && o.twice) items.push(final())
    return items
  }

  /** One write: the receipts due, unusable-id receipts, junk, maybe a killer; all shuffled together. */
  tick(): void {
    const c = this.target()
    if (c === undefined) return
    const now = Date.now()
    const items: Array<Item & { readonly owed?: Owed }> = []
    for (const o of this.owed.values()) {
      if (items.length >= 40) break
      const pending = o.copies.some(
        (s) => s.answers.length === 0 && !s.connection.closed && !this.killed.has(s.connection)
      )
      if (o.acked || pending || o.dueAt > now) continue
      items.push(...this.receiptItems(o))
    }
    for (const submit of this.unusableReceipts.splice(0)) {
      // the id in receipted_message_id too, which the adapter reads first: in the text alone,
      // `id:a 7 sub:…` would read as the usable id `a`
      const pdu = receiptPdu({ id: submit.messageId, source: submit.to, inPayload: true, tlvs: true })
      pdu.sequence_number = this.raw.nextSequence()
      items.push({
        label: "receipt of an unusable id",
        octets: pdu.toBuffer(),
        request: {
          sequence: pdu.sequence_number,
          expect: { kind: "answer", command: "deliver_sm_resp", statuses: [0] }
        }
      })
    }
    for (let i = this.prng.int(0, 5); i > 0; i--) items.push(this.prng.pick(this.junk.menu).make())
    const shuffled = this.prng.shuffle(items)
    if (this.killing && now >= this.nextKillAt) {
      const how = killersOrder[this.killerTurn++ % killersOrder.length]!
      shuffled.splice(this.prng.int(0, shuffled.length), 0, this.junk.killers[how]())
      this.nextKillAt = now + this.prng.int(2500, 4500)
    }
    this.write(c, shuffled, now)
  }

  private write(c: RawConnection, items: ReadonlyArray<Item & { readonly owed?: Owed }>, now: number): void {
    const killerAt = items.findIndex((item) => item.kills !== undefined)
    items.forEach((item, i) => {
      this.written.set(item.label, (this.written.get(item.label) ?? 0) + 1)
      if (item.request === undefined) return
      const owed = item.owed
      const sent: Sent = {
        label: item.label,
        connection: c,
        sequence: item.request.sequence,
        expect: item.request.expect,
        sentAt: now,
        doomed: killerAt !== -1 && i > killerAt,
        answers: [],
        onAnswer:
          owed === undefined
            ? undefined
            : (pdu) => {
                if (pdu.command_status === 0) owed.acked = true
                else owed.dueAt = Date.now() + 300
              }
      }
      this.sent.set(sent.sequence, sent)
      owed?.copies.push(sent)
    })
    const killer = killerAt === -1 ? undefined : items[killerAt]!.kills!
    if (killer !== undefined) this.killed.set(c, { at: now, how: killer })
    const octets = items.map((item) => item.octets)
    if (killer === "longer than what follows") octets.push(desyncFlood())
    this.raw.sendOn(c, [Buffer.concat(octets)])
  }

  /** What is wrong with the answers the adapter gave our requests, and with how connections ended. */
  answerProblems(): Array<string> {
    const problems: Array<string> = []
    for (const s of this.sent.values()) {
      const what = `${s.label} (sequence ${s.sequence}, connection ${this.raw.connections.indexOf(s.connection)})`
      const answers = s.answers.map((a) => `${a.command} 0x${a.command_status.toString(16)}`)
      if (s.answers.length > 1) problems.push(`${what} answered ${s.answers.length} times: ${answers.join(", ")}`)
      const answer = s.answers[0]
      const e = s.expect
      if (e.kind === "none") {
        if (answer !== undefined) problems.push(`${what} answered ${answers[0]}, owed no answer`)
        continue
      }
      if (answer === undefined) {
        if (!this.excused(s)) problems.push(`${what} never answered`)
        continue
      }
      const ok =
        e.kind === "answer"
          ? answer.command === e.command && e.statuses.includes(answer.command_status)
          : e.kind === "nack"
            ? answer.command === "generic_nack" && e.statuses.includes(answer.command_status)
            : answer.command === e.command || answer.command === "generic_nack"
      if (!ok) problems.push(`${what} answered ${answers[0]}, owed ${JSON.stringify(e)}`)
    }
    this.raw.connections.forEach((c, i) => {
      if (c.closed && !this.killed.has(c))
        problems.push(`connection ${i} closed (at ${new Date(c.closedAt!).toISOString()}) without a PDU that drops it`)
    })
    return problems
  }

  /** Figures of the requests: sent, answered, excused (their connection dropped). */
  requestFigures() {
    const all = [...this.sent.values()]
    return {
      requests: all.length,
      answered: all.filter((s) => s.answers.length > 0).length,
      unanswered_on_dropped_connections: all.filter(
        (s) => s.answers.length === 0 && s.expect.kind !== "none" && this.excused(s)
      ).length
    }
  }
}
