/**
 * The OneAPI simulator's control route, on its own port (docs/operators.md#the-oneapi-simulator):
 * an operator, a test or a bench makes a simulated mobile send an inbound message on demand.
 *
 *   POST /simulator/mobile-originated {"from", "to", "text", "notify_url"?}
 *     202 {"message_id": "..."}   POSTed to the inbound URL now, and again until answered 2xx
 *     400 {"error": "..."}        a field is missing or wrong, said in words
 *
 * `from` is the mobile (E.164 with `+`), `to` the number, short code or sender name it writes to,
 * `notify_url` where it goes; without it, SMS_ONEAPI_INBOUND_NOTIFY_URL, or else the inbound URL
 * beside the last receipt URL a send gave.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { answerJson, readBody } from "./Answers.ts"
import type { MobileOriginated, OneApiSim } from "./OneApiSim.ts"

export const controlPath = "/simulator/mobile-originated"

const textMax = 2000
/** An E.164 number, a short code, or a sender name (up to 11 letters, digits and spaces, a letter among them). */
const recipientPattern = /^(?:\+[1-9]\d{6,14}|\d{3,8}|(?=[A-Za-z0-9 ]*[A-Za-z])[A-Za-z0-9 ]{1,11})$/

const isHttpUrl = (v: unknown): v is string => {
  try {
    return typeof v === "string" && ["http:", "https:"].includes(new URL(v).protocol)
  } catch {
    return false
  }
}

/** The inbound message a request's body asks for, or why not. */
export const mobileOriginatedOf = (body: unknown): MobileOriginated | string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "the body must be a JSON object"
  const b = body as Record<string, unknown>
  if (typeof b.from !== "string" || !/^\+[1-9]\d{6,14}$/.test(b.from))
    return "from: the mobile's number in E.164, with + (e.g. +261341234567)"
  if (typeof b.to !== "string" || !recipientPattern.test(b.to))
    return "to: an E.164 number, a short code of 3 to 8 digits, or a sender name of up to 11 letters and digits with a letter"
  if (typeof b.text !== "string" || b.text.length === 0 || b.text.length > textMax)
    return `text: from 1 to ${textMax} characters`
  if (b.notify_url !== undefined && !isHttpUrl(b.notify_url)) return "notify_url: an http or https URL"
  return { from: b.from, to: b.to, text: b.text, ...(b.notify_url === undefined ? {} : { notifyUrl: b.notify_url }) }
}

/** Answers a request to the control route. */
export const handleControl = async (sim: OneApiSim, req: IncomingMessage, res: ServerResponse): Promise<void> => {
  if (req.method !== "POST") return answerJson(res, 405, { error: "POST only" }, { allow: "POST" })
  const text = await readBody(req)
  let body: unknown
  try {
    body = JSON.parse(text ?? "")
  } catch {
    return answerJson(res, 400, { error: "the body must be JSON of at most 64 KiB" })
  }
  const mo = mobileOriginatedOf(body)
  if (typeof mo === "string") return answerJson(res, 400, { error: mo })
  if (sim.inboundUrlFor(mo.notifyUrl) === undefined)
    return answerJson(res, 400, {
      error:
        "notify_url: none given, SMS_ONEAPI_INBOUND_NOTIFY_URL is not set, and no send has given a receipt URL ending in /receipts/<secret> yet"
    })
  answerJson(res, 202, { message_id: sim.sendMobileOriginated(mo) })
}
