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
import { moFieldsOf } from "../MoRequest.ts"
import { answerJson, readBody } from "./Answers.ts"
import type { MobileOriginated, OneApiSim } from "./OneApiSim.ts"

export const controlPath = "/simulator/mobile-originated"

const isHttpUrl = (v: unknown): v is string => {
  try {
    return typeof v === "string" && ["http:", "https:"].includes(new URL(v).protocol)
  } catch {
    return false
  }
}

/** The inbound message a request's body asks for, or why not. */
export const mobileOriginatedOf = (body: unknown): MobileOriginated | string => {
  const fields = moFieldsOf(body)
  if (typeof fields === "string") return fields
  const { b, from, to, text } = fields
  if (b.notify_url !== undefined && !isHttpUrl(b.notify_url)) return "notify_url: an http or https URL"
  return { from, to, text, ...(b.notify_url === undefined ? {} : { notifyUrl: b.notify_url }) }
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
