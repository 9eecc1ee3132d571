/**
 * A bare OneAPI client for the simulator's tests (fetch, nothing of the service): it asks for a
 * token and sends requests in the wire format of docs/operators.md#the-oneapi-simulator, and gives
 * back each answer whole (status, headers, body as text and, when it is JSON, parsed), with how
 * long it took.
 */

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: an answer's body, read field by field
  readonly json: any
  readonly elapsedMs: number
}

const answerOf = async (response: Response, startedAt: number): Promise<Answer> => {
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json, elapsedMs: performance.now() - startedAt }
}

export const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`

/** POSTs a token request; `grant` and `authorization` may be made wrong. */
export const requestToken = async (
  tokenUrl: string,
  options: { readonly authorization?: string; readonly grant?: string } = {}
): Promise<Answer> => {
  const startedAt = performance.now()
  const response = await fetch(tokenUrl, {
    method: "POST",
    headers: {
      authorization: options.authorization ?? basic("sim", "sim"),
      "content-type": "application/x-www-form-urlencoded"
    },
    body: new URLSearchParams({ grant_type: options.grant ?? "client_credentials" })
  })
  return answerOf(response, startedAt)
}

/** A token for the default client; fails if the simulator refuses it. */
export const tokenOf = async (tokenUrl: string): Promise<string> => {
  const answer = await requestToken(tokenUrl)
  if (answer.status !== 200) throw new Error(`token refused: ${answer.status} ${answer.text}`)
  return answer.json.access_token as string
}

export interface Send {
  readonly to: string
  readonly correlator: string
  readonly text?: string
  readonly senderAddress?: string
  readonly senderName?: string | undefined
  /** No receipt asked when undefined. */
  readonly notifyUrl?: string | undefined
  readonly callbackData?: string
}

/** The body of a send request. */
export const sendBody = (send: Send) => ({
  outboundSMSMessageRequest: {
    address: [`tel:${send.to}`],
    senderAddress: send.senderAddress ?? "tel:+2610000",
    ...("senderName" in send
      ? send.senderName === undefined
        ? {}
        : { senderName: send.senderName }
      : { senderName: "DEMO" }),
    outboundSMSTextMessage: { message: send.text ?? "Salama" },
    clientCorrelator: send.correlator,
    ...(send.notifyUrl === undefined
      ? {}
      : { receiptRequest: { notifyURL: send.notifyUrl, callbackData: send.callbackData ?? send.correlator } })
  }
})

/** POSTs `body` (any JSON, or text) to the send route of `senderAddress` with `token`. */
export const postSend = async (
  baseUrl: string,
  token: string | undefined,
  body: unknown,
  options: { readonly senderAddress?: string; readonly contentType?: string; readonly signal?: AbortSignal } = {}
): Promise<Answer> => {
  const startedAt = performance.now()
  const response = await fetch(
    `${baseUrl}/smsmessaging/v1/outbound/${encodeURIComponent(options.senderAddress ?? "tel:+2610000")}/requests`,
    {
      method: "POST",
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        "content-type": options.contentType ?? "application/json"
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
      ...(options.signal === undefined ? {} : { signal: options.signal })
    }
  )
  return answerOf(response, startedAt)
}

/** Sends one SMS request as the adapter does. */
export const sendSms = (baseUrl: string, token: string, send: Send, signal?: AbortSignal): Promise<Answer> =>
  postSend(baseUrl, token, sendBody(send), {
    ...(send.senderAddress === undefined ? {} : { senderAddress: send.senderAddress }),
    ...(signal === undefined ? {} : { signal })
  })
