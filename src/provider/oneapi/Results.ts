/**
 * What a OneAPI provider's answer to a send means (docs/operators.md#oneapi-routes): taken
 * (201, or 409 SVC0005: this correlator was already taken), refused (a service or policy
 * exception), to be tried again (429: nothing was taken), a token to renew (401), or unknown
 * (any other answer: it may have been taken). Pure.
 */
import type { ProviderRef } from "../Provider.ts"
import { parseJson } from "./Token.ts"

export type SendOutcome =
  | { readonly _tag: "Accepted"; readonly providerRef: ProviderRef }
  | { readonly _tag: "Rejected"; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly reason: string }
  /** 429: nothing was taken; again after `retryAfterMs` when the provider says. */
  | { readonly _tag: "Throttled"; readonly retryAfterMs: number | undefined }
  /** 401: the token was refused, nothing was taken. */
  | { readonly _tag: "Unauthorized" }

/** The answer as read off the wire. */
export interface SendAnswer {
  readonly status: number
  readonly location: string | null
  readonly retryAfter: string | null
  readonly body: string
}

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined

/** The last path segment of a resource URL, when there is one. */
export const lastSegment = (url: unknown): string | undefined => {
  if (typeof url !== "string") return undefined
  const segment = url.split("?")[0]!.replace(/\/+$/, "").split("/").pop()
  if (segment === undefined || segment === "") return undefined
  try {
    const id = decodeURIComponent(segment)
    return /^[!-~]{1,128}$/.test(id) ? id : undefined
  } catch {
    return undefined
  }
}

/** The provider's id of a taken request: `resourceReference.resourceURL`, then `outboundSMSMessageRequest.resourceURL`, then `Location`. */
const resourceId = (body: Record<string, unknown> | undefined, location: string | null): string | undefined =>
  lastSegment(field(field(body, "resourceReference"), "resourceURL")) ??
  lastSegment(field(field(body, "outboundSMSMessageRequest"), "resourceURL")) ??
  lastSegment(location)

/** A `requestError`'s service or policy exception: its message id and text. */
export const requestException = (
  body: Record<string, unknown> | undefined
): { readonly messageId: string; readonly text: string } | undefined => {
  const error = field(body, "requestError")
  const exception = field(error, "serviceException") ?? field(error, "policyException")
  const messageId = field(exception, "messageId")
  if (typeof messageId !== "string") return undefined
  const text = field(exception, "text")
  return { messageId, text: typeof text === "string" ? text : "" }
}

/** Retry-After in ms (seconds, or an HTTP date), when readable. */
export const retryAfterMs = (header: string | null, nowMs: number): number | undefined => {
  if (header === null) return undefined
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}

/** What an answer to the send of `messageId` on route `route` means. */
export const sendOutcome = (route: string, messageId: string, answer: SendAnswer, nowMs: number): SendOutcome => {
  const { status } = answer
  if (status === 401) return { _tag: "Unauthorized" }
  if (status === 429) return { _tag: "Throttled", retryAfterMs: retryAfterMs(answer.retryAfter, nowMs) }
  const body = parseJson(answer.body)
  if (status === 201) {
    if (body === undefined) return { _tag: "Unknown", reason: `${route}: answered 201 with a body that is not JSON` }
    const id = resourceId(body, answer.location)
    return id === undefined
      ? { _tag: "Unknown", reason: `${route}: answered 201 without a readable resource URL` }
      : { _tag: "Accepted", providerRef: `${route}:${id}` }
  }
  const exception = requestException(body)
  if (status === 409 && exception?.messageId === "SVC0005") {
    const id = resourceId(body, answer.location)
    return { _tag: "Accepted", providerRef: id === undefined ? `${route}:c:${messageId}` : `${route}:${id}` }
  }
  if ((status === 400 || status === 403 || status === 404) && exception !== undefined)
    return { _tag: "Rejected", reason: `${route} refused it: ${exception.messageId} ${exception.text}`.trim() }
  return { _tag: "Unknown", reason: `${route}: answered ${status}` }
}
