/**
 * The OneAPI simulator: a standalone HTTP server that plays an aggregator speaking the GSMA OneAPI
 * SMS interface as Orange's SMS API does (docs/operators.md#the-oneapi-simulator). It issues
 * OAuth 2.0 client-credentials tokens, takes send requests and answers them by recipient
 * (Behaviour.ts: at once, slowly, late, refused, throttled or never), refuses a client correlator
 * it already took (409 SVC0005: a request sent again never makes a second SMS), and POSTs delivery
 * receipts and inbound messages to the service until they are answered 2xx (Notifier.ts).
 *
 * Its state lives in memory for as long as the object does, whatever happens to the listening
 * socket (`stop` / `restart`): it is the provider's side. Given a data directory, what it owes
 * (its ids, the correlators it took, the receipts not yet acknowledged, its tokens) is also kept
 * there (Book.ts), so that a new OneApiSim on it, in a new process after a kill -9, carries on.
 * Tests drive it through knobs and read what it saw.
 *
 * It also speaks for the mobiles (docs/two-way.md#simulators): the replying numbers answer one
 * receipt delay after their receipt, and `sendMobileOriginated` sends an inbound message on demand
 * (also through the control route, Control.ts).
 *
 * This file holds the server and its routes; the bodies of its answers are Answers.ts, the reading
 * of a send OutboundRequest.ts, the token checks Credentials.ts, what it POSTs Notifications.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { replyingNumbers } from "../../src/provider/inprocess/ReplyingNumbers.ts"
import { Timeline } from "../smsc/Timeline.ts"
import {
  answerJson,
  duplicateCorrelator,
  hasContentType,
  internalError,
  invalidClient,
  invalidInput,
  invalidToken,
  readBody,
  recipientRefused,
  recipientUnreachable,
  tooManyRequests
} from "./Answers.ts"
import { type Behaviour, behaviourOf } from "./Behaviour.ts"
import { Book, type Receipt } from "./Book.ts"
import { controlPath, handleControl } from "./Control.ts"
import { bearerOf, grantsToken, newToken } from "./Credentials.ts"
import { type DeliveryStatus, inboundBody, inboundUrlOf, receiptBody } from "./Notifications.ts"
import { type Log, Notifier } from "./Notifier.ts"
import { glimpse, type OutboundRequest, outboundRequestOf } from "./OutboundRequest.ts"

export interface OneApiSimOptions {
  /** Address to listen on; `0.0.0.0` inside a container network. */
  readonly host: string
  /** 0 picks a free port (tests). */
  readonly port: number
  readonly clientId: string
  readonly clientSecret: string
  /** Lifetime of a token, in seconds (its `expires_in`). */
  readonly tokenTtlS: number
  /** Delay between a message's answer and its receipt. */
  readonly receiptDelayMs: number
  /** Answer delay of the slow number. */
  readonly slowMs: number
  /** Answer delay of the late numbers. */
  readonly lateMs: number
  /** First re-send of a notification not answered 2xx; it doubles each time, up to 16 times this. */
  readonly receiptRetryMs: number
  /** Where inbound messages go; none: beside each message's receipt URL (`/receipts/<secret>` made `/inbound/<secret>`). */
  readonly inboundNotifyUrl?: string
  /** Where what it owes is kept across processes (created if missing); none: in memory only. */
  readonly dataDir?: string
  /** Told of refused tokens and notifications not taken. */
  readonly log?: Log
}

export const defaultOneApiSimOptions: OneApiSimOptions = {
  host: "127.0.0.1",
  port: 0,
  clientId: "sim",
  clientSecret: "sim",
  tokenTtlS: 3600,
  receiptDelayMs: 2000,
  slowMs: 3000,
  lateMs: 12_000,
  receiptRetryMs: 5000
}

/** An SMS the simulator sent to the network: one per client correlator, ever. */
export interface SentSms {
  /** Its id, the last segment of its `resourceURL`. */
  readonly id: string
  readonly correlator: string
  /** E.164, with `+`. */
  readonly to: string
  readonly text: string
  /** As the request wrote it, `tel:…`. */
  readonly senderAddress: string
  readonly senderName: string | undefined
}

/** A send request received, and how it was answered. */
export interface SendRequest {
  /** Its `clientCorrelator` and recipient (E.164), as far as its body could be read. */
  readonly correlator: string | undefined
  readonly to: string | undefined
  /** The HTTP status it was answered; undefined while it is not, or if it never is (held, dropped, or the client gone first). */
  status: number | undefined
}

/** The answer to one POST of a receipt. */
export interface ReceiptAnswer {
  /** The message's id. */
  readonly id: string
  readonly callbackData: string | undefined
  readonly deliveryStatus: DeliveryStatus
  /** The HTTP status; 0 when no answer came (refused connection, timeout). */
  readonly status: number
}

/** The answer to one POST of an inbound message. */
export interface MobileOriginatedAnswer {
  readonly messageId: string
  /** The HTTP status; 0 when no answer came. */
  readonly status: number
}

/** An inbound message to send on demand. */
export interface MobileOriginated {
  /** The mobile it comes from, E.164 with `+`. */
  readonly from: string
  /** The number, short code or sender name it was sent to. */
  readonly to: string
  readonly text: string
  /** Where it goes; default the simulator's inbound URL (`inboundUrlFor`). */
  readonly notifyUrl?: string
}

/** Correlators remembered, and entries of each record kept, at most (beyond, the older half of a record is forgotten). */
const keptMax = 200_000

const keep = <A>(records: Array<A>, record: A): void => {
  records.push(record)
  if (records.length > keptMax) records.splice(0, keptMax / 2)
}

const sendPath = /^\/smsmessaging\/v1\/outbound\/([^/]+)\/requests$/
const tokenPath = "/oauth/v3/token"

export class OneApiSim {
  private readonly options: OneApiSimOptions
  private readonly server: Server
  private readonly timeline = new Timeline()
  private readonly book: Book
  private readonly notifier: Notifier
  private listeningPort: number
  private throttleLeft = 0
  private dropLeft = 0
  private unreadableLeft = 0
  private expireAtLeft = 0
  /** The inbound URL beside the last receipt URL a send gave, if it had that form. */
  private lastInboundUrl: string | undefined

  // knobs
  /** Answer every token request 401 `invalid_client`. */
  refuseTokens = false
  /** Send a `DeliveredToNetwork` receipt when a message is answered, before its final one (a message without one gets it too). */
  intermediateReceipts = false
  /** Extra delay of every 201 it sends at once, the message taken (and journaled) before: sends in flight for a kill -9. */
  responseDelayMs = 0

  // what it saw
  /** Every SMS sent to the network (taken), oldest first. */
  readonly sent: Array<SentSms> = []
  /** Every send request received, oldest first. */
  readonly requests: Array<SendRequest> = []
  tokensIssued = 0
  /** POSTs of receipts, re-sends included (counted as each one ends). */
  receiptsPosted = 0
  /** Every answer to a receipt, in order. */
  readonly receiptAnswers: Array<ReceiptAnswer> = []
  /** POSTs of inbound messages, re-sends included. */
  mobileOriginatedPosted = 0
  /** Every answer to an inbound message, in order. */
  readonly mobileOriginatedAnswers: Array<MobileOriginatedAnswer> = []

  private constructor(options: OneApiSimOptions, book: Book) {
    this.options = options
    this.book = book
    this.notifier = new Notifier(this.timeline, options.receiptRetryMs, options.log)
    this.listeningPort = options.port
    this.server = createServer((req, res) => void this.handle(req, res))
  }

  /** Starts a simulator listening on `options.port` (0: a free one), owing the receipts its data directory says it owes. */
  static async start(options: Partial<OneApiSimOptions> = {}): Promise<OneApiSim> {
    const all = { ...defaultOneApiSimOptions, ...options }
    const book = Book.open(all.dataDir, keptMax)
    const sim = new OneApiSim(all, book)
    try {
      await sim.listen()
    } catch (e) {
      book.close()
      throw e
    }
    for (const [id, owed] of book.receiptsOwed) {
      sim.timeline.after(Math.max(0, owed.dueAt - Date.now()), () => sim.receipt(id, owed))
    }
    return sim
  }

  /** The port it listens (or listened) on. */
  get port(): number {
    return this.listeningPort
  }

  /** `http://127.0.0.1:<port>`: where the service reaches it. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** `<baseUrl>/oauth/v3/token`. */
  get tokenUrl(): string {
    return `${this.baseUrl}${tokenPath}`
  }

  /** Receipts owed and not yet answered 2xx. */
  get receiptsOwed(): number {
    return this.book.receiptsOwed.length
  }

  /** Client correlators it remembers as taken (those of an earlier process on its data directory included). */
  get correlatorsKnown(): number {
    return this.book.correlatorsKnown
  }

  /** Stops listening and closes every connection (a pending answer is lost with it); what it took and owes is kept, and receipts still go. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      this.server.closeAllConnections()
    })
  }

  /** Listens again on the same port after `stop`. */
  restart(): Promise<void> {
    return this.listen()
  }

  /** Stops and forgets every pending answer, receipt and inbound message (end of a test); its data directory keeps what it owes. */
  async dispose(): Promise<void> {
    this.timeline.clear()
    this.notifier.dispose()
    await this.stop()
    this.book.close()
  }

  /** Answers the next `n` send requests with a valid token 429 (`Retry-After: 1`), whatever their recipient; none is taken. */
  throttleNext(n: number): void {
    this.throttleLeft = n
  }

  /** Every token issued so far is expired: a send with one is answered 401. */
  expireTokens(): void {
    this.book.expireTokens()
  }

  /**
   * Expires every token issued so far when the `n`-th next send request arrives (that one is
   * answered 401 too): a token ended while sends carrying it are under way, ahead of its
   * `expires_in`. A short `tokenTtlS` alone never does this to the service, which drops a token 60 s
   * before its expiry (docs/operators.md#oneapi-routes).
   */
  expireTokensAtRequest(n: number): void {
    this.expireAtLeft = n
  }

  /** Takes the next `n` messages it would take (sent, receipt and all) but closes their connection instead of answering. */
  dropNextAnswers(n: number): void {
    this.dropLeft = n
  }

  /** Takes the next `n` messages it would take, and answers them 201 with a body that is not JSON (and no `Location`). */
  unreadableNextAnswers(n: number): void {
    this.unreadableLeft = n
  }

  /** Where an inbound message goes: `notifyUrl`, else the `inboundNotifyUrl` option, else the one beside the last receipt URL given; undefined if none. */
  inboundUrlFor(notifyUrl?: string): string | undefined {
    return notifyUrl ?? this.options.inboundNotifyUrl ?? this.lastInboundUrl
  }

  /**
   * POSTs an inbound message from `mo.from` to `mo.to` now, and again until answered 2xx; returns
   * its `messageId`. Throws when no inbound URL is known (`inboundUrlFor`).
   */
  sendMobileOriginated(mo: MobileOriginated): string {
    const url = this.inboundUrlFor(mo.notifyUrl)
    if (url === undefined) throw new Error("no inbound URL: none given, no inboundNotifyUrl, no receipt URL seen")
    const messageId = String(this.book.newId())
    this.notifier.post(url, inboundBody(messageId, mo.from, mo.to, mo.text, new Date()), (status) => {
      this.mobileOriginatedPosted++
      keep(this.mobileOriginatedAnswers, { messageId, status })
    })
    return messageId
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

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!
    if (path === controlPath) return handleControl(this, req, res)
    const send = sendPath.exec(path)
    if (path !== tokenPath && send === null) return answerJson(res, 404, { error: `no route ${path}` })
    if (req.method !== "POST") return answerJson(res, 405, { error: "POST only" }, { allow: "POST" })
    return send === null ? this.token(req, res) : this.send(req, res, send[1]!)
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = (await readBody(req)) ?? ""
    if (this.refuseTokens || !grantsToken(req, body, this.options.clientId, this.options.clientSecret)) {
      this.options.log?.("token refused", { refuse_tokens: String(this.refuseTokens) })
      return answerJson(res, 401, invalidClient)
    }
    const token = newToken()
    this.book.tokenIssued(token, Date.now() + this.options.tokenTtlS * 1000)
    this.tokensIssued++
    answerJson(
      res,
      200,
      { token_type: "Bearer", access_token: token, expires_in: this.options.tokenTtlS },
      { "cache-control": "no-store" }
    )
  }

  private async send(req: IncomingMessage, res: ServerResponse, pathSender: string): Promise<void> {
    const body = await readBody(req)
    const record: SendRequest = { ...glimpse(body), status: undefined }
    keep(this.requests, record)
    const reply = (status: number, json: unknown, headers: Readonly<Record<string, string>> = {}): void => {
      if (res.writableEnded || req.socket.destroyed) return
      record.status = status
      answerJson(res, status, json, headers)
    }
    if (this.expireAtLeft > 0 && --this.expireAtLeft === 0) this.book.expireTokens()
    if (!this.book.tokenValid(bearerOf(req), Date.now())) return reply(401, invalidToken)
    if (this.throttleLeft > 0) {
      this.throttleLeft--
      return reply(429, tooManyRequests, { "retry-after": "1" })
    }
    if (!hasContentType(req, "application/json")) return reply(400, invalidInput("Content-Type"))
    const request = body === undefined ? "outboundSMSMessageRequest" : outboundRequestOf(body, pathSender)
    if (typeof request === "string") return reply(400, invalidInput(request))
    const inboundUrl = request.receiptRequest && inboundUrlOf(request.receiptRequest.notifyUrl)
    if (inboundUrl !== undefined) this.lastInboundUrl = inboundUrl
    if (this.book.idOf(request.correlator) !== undefined) return reply(409, duplicateCorrelator(request.correlator))
    const behaviour = behaviourOf(request.to)
    switch (behaviour.kind) {
      case "refuse":
        return reply(400, recipientRefused)
      case "throttle":
        return reply(429, tooManyRequests, { "retry-after": "1" })
      case "unreachable":
        if (this.book.sawUnreachable(request.correlator)) return reply(400, recipientUnreachable)
        return this.timeline.after(this.options.lateMs, () => reply(500, internalError))
      case "hold":
        return
      case "take":
        return this.take(request, behaviour, req, res, record)
    }
  }

  /** Takes a message (sent to the network, journaled) and answers it when its behaviour says, its receipt and reply to follow. */
  private take(
    request: OutboundRequest,
    behaviour: Extract<Behaviour, { kind: "take" }>,
    req: IncomingMessage,
    res: ServerResponse,
    record: SendRequest
  ): void {
    const { receiptDelayMs, slowMs, lateMs } = this.options
    const delayMs = behaviour.answer === "slow" ? slowMs : behaviour.answer === "late" ? lateMs : this.responseDelayMs
    const id = this.book.newId()
    const asked = request.receiptRequest
    const owed: Receipt | undefined =
      behaviour.receipt === "none" || asked === undefined
        ? undefined
        : {
            notifyUrl: asked.notifyUrl,
            address: request.address,
            deliveryStatus: behaviour.receipt,
            ...(asked.callbackData === undefined ? {} : { callbackData: asked.callbackData }),
            dueAt: Date.now() + delayMs + receiptDelayMs
          }
    this.book.taken(request.correlator, id, owed)
    keep(this.sent, {
      id: String(id),
      correlator: request.correlator,
      to: request.to,
      text: request.text,
      senderAddress: request.senderAddress,
      senderName: request.senderName
    })
    if (owed !== undefined) this.timeline.after(delayMs + receiptDelayMs, () => this.receipt(id, owed))
    const replyText = replyingNumbers[request.to]
    if (replyText !== undefined && behaviour.receipt === "DeliveredToTerminal")
      this.timeline.after(delayMs + 2 * receiptDelayMs, () => this.replyFrom(request, replyText))
    const loss = this.dropLeft > 0 ? "drop" : this.unreadableLeft > 0 ? "unreadable" : undefined
    if (loss === "drop") this.dropLeft--
    else if (loss === "unreadable") this.unreadableLeft--
    const respond = (): void => {
      if (this.intermediateReceipts && asked !== undefined) this.intermediate(id, request.address, asked)
      if (res.writableEnded || req.socket.destroyed) return
      if (loss === "drop") return void req.socket.destroy()
      record.status = 201
      if (loss === "unreadable") {
        res.writeHead(201, { "content-type": "text/html" }).end("<html><body>Created</body></html>")
        return
      }
      const resourceURL = `${this.baseUrl}/smsmessaging/v1/outbound/${encodeURIComponent(request.senderAddress)}/requests/${id}`
      answerJson(
        res,
        201,
        { outboundSMSMessageRequest: { ...request.raw, resourceURL }, resourceReference: { resourceURL } },
        { location: resourceURL }
      )
    }
    if (delayMs === 0) respond()
    else this.timeline.after(delayMs, respond)
  }

  /** POSTs the final receipt of message `id` until answered 2xx, then owes it no more. */
  private receipt(id: number, owed: Receipt): void {
    this.notifier.post(
      owed.notifyUrl,
      receiptBody(owed.address, owed.deliveryStatus, owed.callbackData),
      (status) => this.receiptAnswered(id, owed.callbackData, owed.deliveryStatus, status),
      () => this.book.acknowledged(id)
    )
  }

  /** POSTs a `DeliveredToNetwork` receipt until answered 2xx (in memory only). */
  private intermediate(id: number, address: string, asked: NonNullable<OutboundRequest["receiptRequest"]>): void {
    this.notifier.post(asked.notifyUrl, receiptBody(address, "DeliveredToNetwork", asked.callbackData), (status) =>
      this.receiptAnswered(id, asked.callbackData, "DeliveredToNetwork", status)
    )
  }

  private receiptAnswered(
    id: number,
    callbackData: string | undefined,
    deliveryStatus: DeliveryStatus,
    status: number
  ): void {
    this.receiptsPosted++
    keep(this.receiptAnswers, { id: String(id), callbackData, deliveryStatus, status })
  }

  /** A replying number's answer to the sender of `request` (docs/two-way.md#simulators): its sender name, or its sender address's number. */
  private replyFrom(request: OutboundRequest, text: string): void {
    const notifyUrl = request.receiptRequest && inboundUrlOf(request.receiptRequest.notifyUrl)
    const url = this.options.inboundNotifyUrl ?? notifyUrl
    if (url === undefined) {
      this.options.log?.("reply not sent: no inbound URL", { from: request.to })
      return
    }
    this.sendMobileOriginated({
      from: request.to,
      to: request.senderName ?? request.senderAddress.replace(/^tel:/, ""),
      text,
      notifyUrl: url
    })
  }
}
