/**
 * One send request to a OneAPI provider on the wire (docs/operators.md#oneapi-routes): its JSON
 * body, and one POST with node:http (connections kept alive), aborted at the deadline, told
 * apart by whether anything can have been written: no connection made (refused, name not found)
 * is NotWritten, any other failure Lost (it may have been taken).
 *
 * node:http rather than fetch: fetch took about twice the CPU of a request (WHATWG streams,
 * Request and Response objects, a combined AbortSignal each), the larger part of what a message
 * sent over OneAPI cost beyond one sent over SMPP (bench/HISTORY.md, scenario 17).
 */
import {
  type Agent,
  type ClientRequest,
  type IncomingMessage,
  Agent as HttpAgent,
  request as httpRequest
} from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { Socket } from "node:net"
import { Effect } from "effect"
import type { Submission } from "../Provider.ts"
import type { SendAnswer } from "./Results.ts"
import { failureCode } from "./Token.ts"

/**
 * How long a kept-alive connection may stay idle when the provider does not say (its
 * `Keep-Alive: timeout=` is honoured, less a second, by node's Agent): fetch's default, so that a
 * connection the provider may have closed is not reused (its failure would be Lost).
 */
export const idleKeepAliveMs = 4000

/** Keeps connections alive; one the provider says nothing about is closed after `idleKeepAliveMs` idle. */
const keptAlive = <A extends Agent>(agent: A): A => {
  const keep = agent.keepSocketAlive.bind(agent)
  agent.keepSocketAlive = (socket: Socket) => {
    // node's Agent returns whether it keeps the socket (its types say void)
    const kept = (keep(socket) as unknown) !== false
    if (kept && !socket.timeout) socket.setTimeout(idleKeepAliveMs)
    return kept
  }
  return agent
}

const httpAgent = keptAlive(new HttpAgent({ keepAlive: true }))
const httpsAgent = keptAlive(new HttpsAgent({ keepAlive: true }))

/** Failures that provably come before anything was written: no connection was made. */
const beforeWrite = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/** One HTTP attempt of a send. */
export type Attempt =
  | { readonly _tag: "Answer"; readonly answer: SendAnswer }
  | { readonly _tag: "NotWritten"; readonly reason: string }
  | { readonly _tag: "Lost"; readonly reason: string }

/** The `outboundSMSMessageRequest` of `s`: the message id is its correlator and its receipts' callback data. */
export const requestBody = (s: Submission, senderAddress: string, notifyUrl: string): string =>
  JSON.stringify({
    outboundSMSMessageRequest: {
      address: [`tel:${s.to}`],
      senderAddress,
      senderName: s.senderName,
      outboundSMSTextMessage: { message: s.text },
      clientCorrelator: s.messageId,
      receiptRequest: { notifyURL: notifyUrl, callbackData: s.messageId }
    }
  })

export interface PostOptions {
  /** The route's name, in reasons. */
  readonly route: string
  readonly url: string
  readonly token: string
  readonly body: string
  /** Until the deadline. */
  readonly timeoutMs: number
  /** The configured deadline, in reasons. */
  readonly responseTimeoutMs: number
}

/** The code of a node:http failure (`ECONNREFUSED`), else as fetch's are read. */
const codeOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : failureCode(e)

/** Thrown into a request at its deadline. */
class Deadline extends Error {
  override readonly name = "TimeoutError"
}

/** One POST; an interrupted caller aborts it. */
export const postRequest = (o: PostOptions): Effect.Effect<Attempt> =>
  Effect.callback<Attempt>((resume, interrupted) => {
    let req: ClientRequest | undefined
    let done = false
    const finish = (attempt: Attempt) => {
      if (done) return
      done = true
      clearTimeout(timer)
      interrupted.removeEventListener("abort", onInterrupt)
      resume(Effect.succeed(attempt))
    }
    const failed = (e: unknown) => {
      const code = e instanceof Deadline ? "TimeoutError" : codeOf(e)
      if (beforeWrite.has(code)) return finish({ _tag: "NotWritten", reason: `${o.route}: ${code}` })
      finish({
        _tag: "Lost",
        reason:
          code === "TimeoutError"
            ? `${o.route}: no answer within ${o.responseTimeoutMs} ms`
            : `${o.route}: connection lost after the request (${code})`
      })
    }
    const timer = setTimeout(() => {
      req?.destroy(new Deadline())
      failed(new Deadline())
    }, o.timeoutMs)
    // interrupted: nobody waits for the answer any more
    const onInterrupt = () => {
      done = true
      clearTimeout(timer)
      req?.destroy()
    }
    interrupted.addEventListener("abort", onInterrupt, { once: true })
    const https = o.url.startsWith("https:")
    const body = Buffer.from(o.body, "utf8")
    try {
      req = (https ? httpsRequest : httpRequest)(o.url, {
        method: "POST",
        agent: https ? httpsAgent : httpAgent,
        headers: {
          authorization: `Bearer ${o.token}`,
          "content-type": "application/json",
          accept: "application/json",
          "content-length": body.length
        }
      })
    } catch (e) {
      failed(e)
      return
    }
    req.on("error", failed)
    req.on("response", (res: IncomingMessage) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("error", failed)
      res.on("aborted", () => failed(new Error("aborted")))
      res.on("end", () =>
        finish({
          _tag: "Answer",
          answer: {
            status: res.statusCode ?? 0,
            location: headerOf(res, "location"),
            retryAfter: headerOf(res, "retry-after"),
            body: Buffer.concat(chunks).toString("utf8")
          }
        })
      )
    })
    req.end(body)
  })

const headerOf = (res: IncomingMessage, name: string): string | null => {
  const value = res.headers[name]
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value
}
