/**
 * The bodies the OneAPI simulator answers with, as the GSMA OneAPI SMS interface writes them
 * (docs/operators.md#the-oneapi-simulator): a `requestError` holding a `policyException` or a
 * `serviceException`, each with its `messageId`, `text` and, for a text with `%1`, its
 * `variables`; and the reading of a request's body.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

/** Largest request body read, in bytes. */
export const bodyMax = 65_536

const policy = (messageId: string, text: string) => ({ requestError: { policyException: { messageId, text } } })

const service = (messageId: string, text: string, variables?: ReadonlyArray<string>) => ({
  requestError: { serviceException: { messageId, text, ...(variables === undefined ? {} : { variables }) } }
})

/** 401 to a send without a token it knows, or with an expired one. */
export const invalidToken = policy("POL0001", "invalid or expired token")
/** 400 to a send whose body does not match; `field` names the first part that does not. */
export const invalidInput = (field: string) => service("SVC0002", "Invalid input value for message part %1", [field])
/** 409 to a send under a correlator already taken. */
export const duplicateCorrelator = (correlator: string) =>
  service("SVC0005", "Duplicate clientCorrelator %1", [correlator])
/** 400 to a send to +261340000003. */
export const recipientRefused = policy("POL0003", "Recipient refused")
/** 400 to a send to +261340000008 under a correlator seen before. */
export const recipientUnreachable = service("SVC0001", "recipient unreachable")
/** 500 to the first send to +261340000008 under a correlator (after the late delay). */
export const internalError = service("SVC0001", "internal error")
/** 429, with `Retry-After: 1`: the form Orange's gateway gives its rate limit, not a `requestError`. */
export const tooManyRequests = {
  code: 53,
  message: "Too many requests",
  description: "The application has made too many calls and has exceeded the rate limit for this service."
}
/** 401 from the token endpoint. */
export const invalidClient = { error: "invalid_client" }

/** Answers `status` with `body` as JSON, and `headers`. */
export const answerJson = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {}
): void => {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))
}

/** The request's body as text; undefined when it is longer than `bodyMax` or the request fails. */
export const readBody = (req: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve) => {
    let text = ""
    let length = 0
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => {
      length += Buffer.byteLength(chunk)
      if (length > bodyMax) {
        resolve(undefined)
        req.removeAllListeners("data")
        req.resume()
        return
      }
      text += chunk
    })
    req.on("end", () => resolve(text))
    req.on("error", () => resolve(undefined))
  })

/** Whether the request's `Content-Type` is `type` (parameters such as `charset` aside). */
export const hasContentType = (req: IncomingMessage, type: string): boolean =>
  (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === type
