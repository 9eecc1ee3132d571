/**
 * One SMPP connection to an SMSC: its bind, the requests awaiting their response, and an answer
 * for every PDU the SMSC may send (SMPP 3.4): `enquire_link` and `unbind` are answered here,
 * `deliver_sm` and `data_sm` go to the provider, `alert_notification` and `outbind` get no
 * answer (SMPP 3.4 defines none), and any other request, or a command id nobody knows, gets
 * `generic_nack`. A response is matched by sequence number and command id (or a
 * `generic_nack`), so an answer of the wrong kind never settles a request. A request whose caller
 * stopped waiting (its deadline passed, its fiber was interrupted) stays matched, so an answer
 * that comes late is handed to `onLateAnswer` instead of being lost; those are bounded
 * (`lateAnswersKeptMax`, oldest forgotten first) and forgotten when the connection closes,
 * since no answer can come on a closed connection. Nothing the SMSC sends can end the process:
 * at worst it closes this connection (PduSocket.ts).
 */
import { Deferred, Effect, Redacted } from "effect"
import smpp from "smpp"
import { type Frame, type PduHeader, PduSocket } from "./PduSocket.ts"
import type { SmscEndpoint } from "../../config/SmppSettings.ts"
import { describeStatus, Status } from "./Statuses.ts"

/** What a response said, whatever its command. */
export interface Response {
  readonly status: number
  /** The `message_id` field of a `submit_sm_resp` or `query_sm_resp`, as written (unchecked). */
  readonly messageId: string | undefined
}

/** How a request ended for the caller who waited for it. */
export type Answer =
  | ({ readonly _tag: "Answered" } & Response)
  /** Nothing was written: the connection is closed, or `gate` said no. */
  | { readonly _tag: "NotWritten"; readonly gated: boolean }
  /** It was written, then the connection closed before the answer. */
  | { readonly _tag: "Lost"; readonly reason: string }

export interface LinkHandlers<L> {
  /** A `deliver_sm` or `data_sm` arrived; the handler answers it with `respond` once it is done with it. */
  readonly onDeliver: (link: Link<L>, pdu: smpp.PDU) => void
  /** The answer to a request whose caller had stopped waiting, with what the request was sent with. */
  readonly onLateAnswer: (late: L, response: Response) => void
  /** The SMSC sent something the link refused or left unanswered (for the logs). */
  readonly onUnexpected: (link: Link<L>, what: string) => void
  /** The connection closed (called once, synchronously, before anyone waiting on it resumes). */
  readonly onClosed: (link: Link<L>, reason: string) => void
}

interface Pending<L> {
  resume: ((answer: Answer) => void) | undefined
  readonly late: L | undefined
  /** The request's command id: its response must carry it with the response bit. */
  readonly commandId: number
}

/** Most abandoned requests a connection keeps matching for their late answers. */
export const lateAnswersKeptMax = 10_000

const SMPP_VERSION_34 = 0x34
const RESPONSE_BIT = 0x8000_0000
const GENERIC_NACK = 0x8000_0000
/** Requests SMPP 3.4 answers with nothing. */
const ALERT_NOTIFICATION = 0x0000_0102
const OUTBIND = 0x0000_000b

const notWritten = (gated: boolean): Answer => ({ _tag: "NotWritten", gated })
const hex = (n: number): string => `0x${n.toString(16).padStart(8, "0")}`
const isResponse = (header: PduHeader): boolean => header.commandId >= RESPONSE_BIT

export class Link<L> {
  private readonly pending = new Map<number, Pending<L>>()
  private abandoned = 0
  private closedReason: string | undefined
  private readonly connected = Deferred.makeUnsafe<void, string>()
  private readonly closed = Deferred.makeUnsafe<string>()
  private readonly socket: PduSocket
  private readonly handlers: LinkHandlers<L>

  /** Opens the TCP connection to `endpoint`; `awaitConnected` tells when it is up. */
  constructor(endpoint: Pick<SmscEndpoint, "host" | "port">, handlers: LinkHandlers<L>) {
    this.handlers = handlers
    this.socket = new PduSocket(endpoint.host, endpoint.port, {
      onConnect: () => Deferred.doneUnsafe(this.connected, Effect.void),
      onFrame: (frame) => this.receive(frame),
      onClose: (reason) => this.markClosed(reason)
    })
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
      const sequence = this.socket.request(pdu)
      if (sequence === undefined) return resume(Effect.succeed(notWritten(false)))
      const entry: Pending<L> = { resume: (answer) => resume(Effect.succeed(answer)), late, commandId: pdu.command_id }
      this.pending.set(sequence, entry)
      return Effect.sync(() => this.abandon(sequence, entry))
    })
  }

  /** Answers a request of the SMSC (a `deliver_sm`, `data_sm`…) with `status`, if the connection is still open. */
  respond(request: smpp.PDU, status: number): void {
    let response: smpp.PDU
    try {
      response = request.response({ command_status: status })
    } catch {
      return this.nack(request.sequence_number, status === Status.ok ? Status.systemError : status)
    }
    this.socket.write(response)
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
    this.socket.destroy(reason)
  }

  private nack(sequenceNumber: number, status: number): void {
    this.socket.write(new smpp.PDU("generic_nack", { command_status: status, sequence_number: sequenceNumber }))
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

  private receive(frame: Frame): void {
    if (isResponse(frame.header)) this.answered(frame)
    else this.requested(frame)
  }

  private answered(frame: Frame): void {
    const { header } = frame
    const entry = this.pending.get(header.sequenceNumber)
    const nack = header.commandId === GENERIC_NACK
    if (entry === undefined || (!nack && header.commandId !== (entry.commandId | RESPONSE_BIT) >>> 0)) {
      return this.handlers.onUnexpected(
        this,
        `a response ${hex(header.commandId)} matching no request of ours (sequence ${header.sequenceNumber}); ignored`
      )
    }
    this.pending.delete(header.sequenceNumber)
    const messageId =
      frame._tag === "Pdu" && typeof frame.pdu.message_id === "string" ? frame.pdu.message_id : undefined
    // a generic_nack refuses the request, whatever status it carries
    const response: Response = {
      status: nack && header.commandStatus === Status.ok ? Status.systemError : header.commandStatus,
      messageId
    }
    const resume = entry.resume
    if (resume !== undefined) {
      entry.resume = undefined
      resume({ _tag: "Answered", ...response })
    } else {
      this.abandoned--
      if (entry.late !== undefined) this.handlers.onLateAnswer(entry.late, response)
    }
  }

  private requested(frame: Frame): void {
    const { header } = frame
    if (header.commandId === ALERT_NOTIFICATION || header.commandId === OUTBIND) {
      return this.handlers.onUnexpected(
        this,
        `${header.commandId === OUTBIND ? "outbind" : "alert_notification"} on a bound connection; ignored (SMPP 3.4 answers it with nothing)`
      )
    }
    if (frame._tag === "Malformed") {
      this.handlers.onUnexpected(
        this,
        `a request ${hex(header.commandId)} that cannot be decoded (${frame.why}); answered generic_nack`
      )
      return this.nack(header.sequenceNumber, Status.systemError)
    }
    const pdu = frame.pdu
    switch (pdu.command) {
      case "enquire_link":
        return this.respond(pdu, Status.ok)
      case "deliver_sm":
      case "data_sm":
        return this.handlers.onDeliver(this, pdu)
      case "unbind":
        this.respond(pdu, Status.ok)
        return this.socket.end()
      default:
        this.handlers.onUnexpected(
          this,
          `a request ${pdu.command} (${hex(header.commandId)}) an ESME does not take; answered generic_nack`
        )
        return this.nack(header.sequenceNumber, Status.invalidCommand)
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
export const openLink = <L>(
  endpoint: SmscEndpoint,
  handlers: LinkHandlers<L>,
  timeoutMs: number
): Effect.Effect<Link<L>, string> =>
  Effect.suspend(() => {
    const at = `${endpoint.host}:${endpoint.port}`
    const link = new Link<L>(endpoint, handlers)
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
        return answer.status === Status.ok
          ? Effect.succeed(link)
          : Effect.fail(`bind refused by ${at}: ${describeStatus(answer.status)}`)
      }),
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () => Effect.fail(`no bind answer from ${at} within ${timeoutMs} ms`)
      }),
      Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : Effect.sync(() => link.destroy("bind failed"))))
    )
  })
