/**
 * One SMPP connection to an SMSC: the `smpp` package's session, its bind, and the requests
 * awaiting their response, matched by sequence number in O(1). A request whose caller stopped
 * waiting (its deadline passed, its fiber was interrupted) stays matched, so an answer that
 * comes late is handed to `onLateAnswer` instead of being lost; those are bounded
 * (`lateAnswersKeptMax`, oldest forgotten first) and forgotten when the connection closes,
 * since no answer can come on a closed connection.
 */
import { Deferred, Effect, Redacted } from "effect"
import smpp from "smpp"
import { sendPdu } from "./SendPdu.ts"
import type { SmscEndpoint } from "./SmppSettings.ts"
import { describeStatus, Status } from "./Statuses.ts"

/** How a request ended for the caller who waited for it. */
export type Answer =
  | { readonly _tag: "Answered"; readonly pdu: smpp.PDU }
  /** Nothing was written: the connection is closed, or `gate` said no. */
  | { readonly _tag: "NotWritten"; readonly gated: boolean }
  /** It was written, then the connection closed before the answer. */
  | { readonly _tag: "Lost"; readonly reason: string }

export interface LinkHandlers<L> {
  /** A `deliver_sm` arrived; the handler answers it with `respond` once it is done with it. */
  readonly onDeliver: (link: Link<L>, pdu: smpp.PDU) => void
  /** The answer to a request whose caller had stopped waiting, with what the request was sent with. */
  readonly onLateAnswer: (late: L, pdu: smpp.PDU) => void
  /** The connection closed (called once, synchronously, before anyone waiting on it resumes). */
  readonly onClosed: (link: Link<L>, reason: string) => void
}

interface Pending<L> {
  resume: ((answer: Answer) => void) | undefined
  readonly late: L | undefined
}

/** Most abandoned requests a connection keeps matching for their late answers. */
export const lateAnswersKeptMax = 10_000

const SMPP_VERSION_34 = 0x34

const notWritten = (gated: boolean): Answer => ({ _tag: "NotWritten", gated })

export class Link<L> {
  private readonly pending = new Map<number, Pending<L>>()
  private abandoned = 0
  private closedReason: string | undefined
  private readonly connected = Deferred.makeUnsafe<void, string>()
  private readonly closed = Deferred.makeUnsafe<string>()
  private readonly session: smpp.Session
  private readonly handlers: LinkHandlers<L>

  /** Takes over a session: answers `enquire_link` and `unbind`, refuses what an ESME is not sent, routes the rest. */
  constructor(session: smpp.Session, handlers: LinkHandlers<L>) {
    this.session = session
    this.handlers = handlers
    // PDUs are small and answered one by one: Nagle's algorithm would hold each for an ACK
    session.socket.setNoDelay(true)
    session.on("connect", () => Deferred.doneUnsafe(this.connected, Effect.void))
    session.on("pdu", (pdu) => this.receive(pdu))
    // a socket error closes the socket; a PDU the package cannot parse leaves the session stuck: either way it is over
    session.on("error", (error) => this.destroy(error.code ?? `unreadable PDU: ${error.message}`))
    session.on("close", () => this.markClosed("closed by the SMSC"))
  }

  /** Whether the connection is still open. */
  get isOpen(): boolean {
    return this.closedReason === undefined
  }

  /** Succeeds once the TCP connection is up; fails with why it could not be made. */
  get awaitConnected(): Effect.Effect<void, string> {
    return Deferred.await(this.connected)
  }

  /** Succeeds with why the connection closed, once it has. */
  get awaitClosed(): Effect.Effect<string> {
    return Deferred.await(this.closed)
  }

  /**
   * Writes a request and waits for its answer. `gate`, called just before the write, may refuse
   * it (the MPS cap). If the caller stops waiting after the write, a request sent with `late`
   * stays matched and its answer goes to `onLateAnswer`.
   */
  request(pdu: smpp.PDU, late: L | undefined, gate?: () => boolean): Effect.Effect<Answer> {
    return Effect.callback<Answer>((resume) => {
      if (this.closedReason !== undefined) return resume(Effect.succeed(notWritten(false)))
      if (gate !== undefined && !gate()) return resume(Effect.succeed(notWritten(true)))
      if (!sendPdu(this.session, pdu)) return resume(Effect.succeed(notWritten(false)))
      const sequence = pdu.sequence_number
      const entry: Pending<L> = { resume: (answer) => resume(Effect.succeed(answer)), late }
      this.pending.set(sequence, entry)
      return Effect.sync(() => this.abandon(sequence, entry))
    })
  }

  /** Answers a request of the SMSC (a `deliver_sm`) with `status`, if the connection is still open. */
  respond(pdu: smpp.PDU, status: number): void {
    if (this.closedReason === undefined) sendPdu(this.session, pdu.response({ command_status: status }))
  }

  /** Unbinds politely (waiting at most `timeoutMs` for `unbind_resp`), then closes; requests still waiting are Lost. */
  unbind(timeoutMs: number): Effect.Effect<void> {
    return this.request(new smpp.PDU("unbind"), undefined).pipe(
      Effect.timeoutOption(timeoutMs),
      Effect.andThen(Effect.sync(() => this.destroy("unbound")))
    )
  }

  /** Closes the connection at once; requests still waiting are Lost with `reason`. */
  destroy(reason: string): void {
    this.markClosed(reason)
    this.session.destroy()
  }

  private abandon(sequence: number, entry: Pending<L>): void {
    if (entry.resume === undefined) return
    entry.resume = undefined
    if (entry.late === undefined || this.closedReason !== undefined) {
      this.pending.delete(sequence)
      return
    }
    this.abandoned++
    if (this.abandoned > lateAnswersKeptMax) this.forgetOldestAbandoned()
  }

  /** Insertion order is sending order, and at most a window of live requests precede it. */
  private forgetOldestAbandoned(): void {
    for (const [sequence, entry] of this.pending) {
      if (entry.resume === undefined) {
        this.pending.delete(sequence)
        this.abandoned--
        return
      }
    }
  }

  private receive(pdu: smpp.PDU): void {
    if (pdu.isResponse()) {
      const entry = this.pending.get(pdu.sequence_number)
      if (entry === undefined) return
      this.pending.delete(pdu.sequence_number)
      const resume = entry.resume
      if (resume !== undefined) {
        entry.resume = undefined
        resume({ _tag: "Answered", pdu })
      } else {
        this.abandoned--
        if (entry.late !== undefined) this.handlers.onLateAnswer(entry.late, pdu)
      }
      return
    }
    switch (pdu.command) {
      case "enquire_link":
        return this.respond(pdu, Status.ok)
      case "deliver_sm":
        return this.handlers.onDeliver(this, pdu)
      case "unbind":
        this.respond(pdu, Status.ok)
        return this.session.close()
      default:
        this.respond(pdu, Status.invalidCommand)
    }
  }

  private markClosed(reason: string): void {
    if (this.closedReason !== undefined) return
    this.closedReason = reason
    this.handlers.onClosed(this, reason)
    for (const entry of this.pending.values()) {
      const resume = entry.resume
      entry.resume = undefined
      resume?.({ _tag: "Lost", reason })
    }
    this.pending.clear()
    this.abandoned = 0
    Deferred.doneUnsafe(this.connected, Effect.fail(reason))
    Deferred.doneUnsafe(this.closed, Effect.succeed(reason))
  }
}

/**
 * Connects to an SMSC and binds as a transceiver within `timeoutMs`; fails with one line an
 * operator can act on (`cannot connect to host:2775: ECONNREFUSED`, `bind refused by host:2775:
 * 0x0e ESME_RINVPASWD`).
 */
export const openLink = <L>(endpoint: SmscEndpoint, handlers: LinkHandlers<L>, timeoutMs: number): Effect.Effect<Link<L>, string> =>
  Effect.suspend(() => {
    const at = `${endpoint.host}:${endpoint.port}`
    const link = new Link<L>(smpp.connect({ host: endpoint.host, port: endpoint.port }), handlers)
    const bind = new smpp.PDU("bind_transceiver", {
      system_id: endpoint.systemId,
      password: Redacted.value(endpoint.password),
      interface_version: SMPP_VERSION_34
    })
    return link.awaitConnected.pipe(
      Effect.mapError((why) => `cannot connect to ${at}: ${why}`),
      Effect.andThen(link.request(bind, undefined)),
      Effect.flatMap((answer): Effect.Effect<Link<L>, string> => {
        if (answer._tag !== "Answered") return Effect.fail(`connection to ${at} closed during the bind`)
        const status = answer.pdu.command_status
        return status === Status.ok ? Effect.succeed(link) : Effect.fail(`bind refused by ${at}: ${describeStatus(status)}`)
      }),
      Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.fail(`no bind answer from ${at} within ${timeoutMs} ms`) }),
      Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : Effect.sync(() => link.destroy("bind failed"))))
    )
  })
