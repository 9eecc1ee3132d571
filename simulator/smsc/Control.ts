/**
 * The SMSC simulator's control port: an operator (or a test, or a bench) makes the simulated
 * mobiles send a mobile-originated message (MO) on demand (docs/operators.md#the-smsc-simulator).
 *
 *   POST /mobile-originated {"from", "to", "text", "form"?, "shuffle"?, "repeat_part"?}
 *     202 {"deliver_sm": n}   the parts are sent on a bound connection (or as soon as one is),
 *                             and again until the service answers each with status 0
 *     400 {"error": "..."}    a field is missing or wrong, said in words
 *
 * `from` is the mobile (E.164 with `+`), `to` the number, short code or sender name it writes to,
 * `form` how a long text is cut (`udh8`, the default; `udh16`; `sar`; `payload`, the whole text in
 * one `message_payload`), `shuffle` sends the parts in a random order, `repeat_part` sends the part
 * at that index (from 0) twice. It listens on loopback only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { moFieldsOf } from "../MoRequest.ts"
import { type PartForm, partForms } from "./MoParts.ts"
import type { MobileOriginated, Smsc } from "./Smsc.ts"

const bodyMax = 16_384

/** The MO a request's body asks for, or why not. */
export const mobileOriginatedOf = (body: unknown): MobileOriginated | string => {
  const fields = moFieldsOf(body)
  if (typeof fields === "string") return fields
  const { b, from, to, text } = fields
  if (b.form !== undefined && !partForms.includes(b.form as PartForm)) return `form: one of ${partForms.join(", ")}`
  if (b.shuffle !== undefined && typeof b.shuffle !== "boolean") return "shuffle: true or false"
  if (b.repeat_part !== undefined && !(Number.isInteger(b.repeat_part) && (b.repeat_part as number) >= 0))
    return "repeat_part: the index (from 0) of the part to send twice"
  return {
    from,
    to,
    text,
    ...(b.form === undefined ? {} : { form: b.form as PartForm }),
    ...(b.shuffle === undefined ? {} : { shuffle: b.shuffle }),
    ...(b.repeat_part === undefined ? {} : { repeatPart: b.repeat_part as number })
  }
}

const answer = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}

const readBody = (req: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => {
      text += chunk
      if (text.length > bodyMax) {
        resolve(undefined)
        req.destroy()
      }
    })
    req.on("end", () => resolve(text))
    req.on("error", () => resolve(undefined))
  })

const handle = async (smsc: Smsc, req: IncomingMessage, res: ServerResponse): Promise<void> => {
  if (req.url !== "/mobile-originated") return answer(res, 404, { error: "the one route is POST /mobile-originated" })
  if (req.method !== "POST") return answer(res, 405, { error: "POST only" })
  const text = await readBody(req)
  if (text === undefined) return answer(res, 400, { error: `the body must be JSON of at most ${bodyMax} bytes` })
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return answer(res, 400, { error: "the body must be JSON" })
  }
  const mo = mobileOriginatedOf(body)
  if (typeof mo === "string") return answer(res, 400, { error: mo })
  answer(res, 202, { deliver_sm: smsc.sendMobileOriginated(mo) })
}

/** Serves the control port of `smsc` on 127.0.0.1:`port` (0: a free one); resolves once listening. */
export const serveControl = (smsc: Smsc, port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer((req, res) => void handle(smsc, req, res))
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject)
      resolve(server)
    })
  })
