/**
 * The rules of status webhooks (docs/decisions.md#webhooks) that need no I/O: the event types, the
 * syntax of an endpoint's URL, the number of endpoints and the retry schedule.
 */
import { Schema } from "effect"

/** Every event type an endpoint may subscribe to; `webhook.test` is sent on demand only. */
export const WebhookEventTypes = [
  "message.accepted",
  "message.delivered",
  "message.undeliverable",
  "message.failed",
  "message.blocked",
  "message.unknown",
  "batch.completed",
  "message.received",
  "contact.opted_out",
  "contact.opted_in"
] as const
export type WebhookEventType = (typeof WebhookEventTypes)[number]
export const WebhookEventTypeSchema = Schema.Literals(WebhookEventTypes)

/** The message statuses whose entry emits `message.<status>`. */
export const webhookMessageStatuses = [
  "accepted",
  "delivered",
  "undeliverable",
  "failed",
  "blocked",
  "unknown"
] as const

/** Most endpoints per organisation. */
export const webhookEndpointsMax = 10
/** Longest URL of an endpoint, in characters. */
export const webhookUrlLengthMax = 2048

/** What is wrong with `raw` as an endpoint URL, before its host is resolved; undefined when nothing is. */
export const urlSyntaxProblem = (raw: string): string | undefined => {
  if (raw.length > webhookUrlLengthMax) return `must be at most ${webhookUrlLengthMax} characters`
  if (!URL.canParse(raw)) return "must be an absolute http or https URL"
  const url = new URL(raw)
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an absolute http or https URL"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  return undefined
}

/** The waits after each failed attempt before the next one; after the last, the delivery is failed. */
export const webhookRetryDelaysMs = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000
] as const

/** Most jitter added to a retry delay, as a fraction of it. */
export const webhookRetryJitterMax = 0.1

/**
 * The wait before the next attempt after `attempts` failed ones (1 after the first), with
 * `unit` (in [0, 1)) of the jitter; undefined when the delivery has used every attempt.
 */
export const webhookRetryDelayMs = (attempts: number, unit: number): number | undefined => {
  const base = webhookRetryDelaysMs[attempts - 1]
  return base === undefined ? undefined : Math.round(base * (1 + webhookRetryJitterMax * unit))
}
