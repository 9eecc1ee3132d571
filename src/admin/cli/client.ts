/** HTTP calls to the operator API: one route per command, over an injectable `fetch`. */
import type { Command, Settings } from "./args.ts"

/** The part of the global `fetch` the client uses; tests pass one backed by the in-process app. */
export type FetchFn = (url: string, init: RequestInit) => Promise<Response>

export interface ApiRequest {
  readonly method: "GET" | "POST" | "PATCH" | "PUT"
  /** Path under `/admin/v1`, its segments already encoded. */
  readonly path: string
  readonly body?: unknown
}

/** The `error` object of the spec's error body (2.10), plus the top-level `message_id`. */
export interface ApiErrorInfo {
  readonly code: string
  readonly message: string
  readonly details?: unknown
  readonly messageId?: string
}

export type ApiOutcome =
  /** A 2xx answer with its JSON body. */
  | { readonly kind: "ok"; readonly status: number; readonly body: unknown }
  /** Any other answer; `body` is the parsed JSON body when there was one (else the raw text). */
  | { readonly kind: "api-error"; readonly status: number; readonly body: unknown; readonly error: ApiErrorInfo }
  /** No HTTP answer at all. */
  | { readonly kind: "network-error"; readonly url: string; readonly reason: string }

const seg = encodeURIComponent

/** The operator route of a command (contract section 2). */
export const requestFor = (command: Command): ApiRequest => {
  switch (command.name) {
    case "org create":
      return {
        method: "POST",
        path: "/organizations",
        body: { name: command.orgName, ...(command.sender === undefined ? {} : { default_sender_name: command.sender }) }
      }
    case "org show":
      return { method: "GET", path: `/organizations/${seg(command.orgId)}` }
    case "org update":
      return {
        method: "PATCH",
        path: `/organizations/${seg(command.orgId)}`,
        body: {
          ...(command.smsEnabled === undefined ? {} : { sms_enabled: command.smsEnabled }),
          ...(command.sender === undefined ? {} : { default_sender_name: command.sender })
        }
      }
    case "key create":
      return { method: "POST", path: `/organizations/${seg(command.orgId)}/api-keys`, body: { permissions: command.permissions } }
    case "key revoke":
      return { method: "POST", path: `/api-keys/${seg(command.keyId)}/revoke` }
    case "credits grant":
      return {
        method: "POST",
        path: `/organizations/${seg(command.orgId)}/credits`,
        body: { amount: command.amount, ...(command.validUntil === undefined ? {} : { valid_until: command.validUntil }) }
      }
    case "sender set":
      return {
        method: "PUT",
        path: `/organizations/${seg(command.orgId)}/senders/${seg(command.sender)}`,
        body: { active: command.active }
      }
    case "message show":
      return { method: "GET", path: `/organizations/${seg(command.orgId)}/messages/${seg(command.messageId)}` }
    case "message erase":
      return { method: "POST", path: `/organizations/${seg(command.orgId)}/messages/${seg(command.messageId)}/erasure` }
  }
}

/** Why a `fetch` failed, in one line: the innermost cause's code and message when Node gives them. */
const networkReason = (error: unknown): string => {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return "no answer in time"
  let current: unknown = error
  let reason = error instanceof Error ? error.message : String(error)
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined; depth++) {
    current = current.cause
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code
      reason = typeof code === "string" && !current.message.includes(code) ? `${code}: ${current.message}` : current.message
    }
  }
  return reason === "" ? "unknown network error" : reason
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Reads the spec's error body, or describes a non-conforming answer. */
const errorInfo = (status: number, statusText: string, body: unknown, text: string): ApiErrorInfo => {
  const error = isRecord(body) ? body.error : undefined
  if (isRecord(error) && typeof error.code === "string") {
    const messageId = isRecord(body) && typeof body.message_id === "string" ? body.message_id : undefined
    return {
      code: error.code,
      message: typeof error.message === "string" ? error.message : "",
      ...(error.details === undefined ? {} : { details: error.details }),
      ...(messageId === undefined ? {} : { messageId })
    }
  }
  const snippet = text.replace(/\s+/g, " ").trim().slice(0, 200)
  const what = status >= 200 && status < 300 ? "answer is not JSON" : `HTTP ${status}${statusText === "" ? "" : ` ${statusText}`}`
  return { code: `http_${status}`, message: snippet === "" ? what : `${what}: ${snippet}` }
}

export interface SendOptions {
  /** Give up waiting for an answer after this long (default 30 s). */
  readonly timeoutMs?: number
}

/** Sends one request to the operator API and classifies the answer. */
export const send = async (settings: Settings, fetchFn: FetchFn, request: ApiRequest, options: SendOptions = {}): Promise<ApiOutcome> => {
  const url = `${settings.url}/admin/v1${request.path}`
  const headers: Record<string, string> = { authorization: `Bearer ${settings.token}`, accept: "application/json" }
  if (request.body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  let text: string
  try {
    response = await fetchFn(url, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000)
    })
    text = await response.text()
  } catch (error) {
    return { kind: "network-error", url, reason: networkReason(error) }
  }
  let body: unknown = undefined
  let isJson = false
  if (text !== "") {
    try {
      body = JSON.parse(text)
      isJson = true
    } catch {
      body = text
    }
  }
  if (response.ok && isJson) return { kind: "ok", status: response.status, body }
  return { kind: "api-error", status: response.status, body, error: errorInfo(response.status, response.statusText, body, text) }
}
