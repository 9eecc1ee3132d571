/**
 * One send request to a OneAPI provider on the wire (docs/operators.md#oneapi-routes): its JSON
 * body, and one POST with node's fetch (connections kept alive), aborted at the deadline, told
 * apart by whether anything can have been written: no connection made (refused, name not found)
 * is NotWritten, any other failure Lost (it may have been taken).
 */
import { Effect } from "effect"
import type { Submission } from "../Provider.ts"
import type { SendAnswer } from "./Results.ts"
import { failureCode } from "./Token.ts"

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

/** One POST; an interrupted caller aborts it. */
export const postRequest = (o: PostOptions): Effect.Effect<Attempt> =>
  Effect.promise(async (interrupted): Promise<Attempt> => {
    const signal = AbortSignal.any([interrupted, AbortSignal.timeout(o.timeoutMs)])
    try {
      // node's fetch keeps its connections alive between requests
      const response = await fetch(o.url, {
        method: "POST",
        headers: { authorization: `Bearer ${o.token}`, "content-type": "application/json", accept: "application/json" },
        body: o.body,
        signal
      })
      const text = await response.text()
      return {
        _tag: "Answer",
        answer: {
          status: response.status,
          location: response.headers.get("location"),
          retryAfter: response.headers.get("retry-after"),
          body: text
        }
      }
    } catch (e) {
      const code = failureCode(e)
      if (beforeWrite.has(code)) return { _tag: "NotWritten", reason: `${o.route}: ${code}` }
      return {
        _tag: "Lost",
        reason:
          code === "TimeoutError" || code === "AbortError"
            ? `${o.route}: no answer within ${o.responseTimeoutMs} ms`
            : `${o.route}: connection lost after the request (${code})`
      }
    }
  })
