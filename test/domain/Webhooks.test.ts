/** The webhook rules that need no database (src/domain/Webhooks.ts): the URL's syntax, the retry schedule, the event types. */
import { describe, expect, it } from "vitest"
import {
  urlSyntaxProblem,
  webhookEndpointsMax,
  WebhookEventTypes,
  webhookMessageStatuses,
  webhookRetryDelayMs,
  webhookRetryDelaysMs,
  webhookRetryJitterMax,
  webhookUrlLengthMax
} from "../../src/domain/Webhooks.ts"

describe("webhook URL syntax", () => {
  it("accepts absolute http and https URLs with a host", () => {
    expect(urlSyntaxProblem("https://hooks.example/sms")).toBeUndefined()
    expect(urlSyntaxProblem("http://hooks.example:8080/a?b=c")).toBeUndefined()
  })
  it("refuses what is not an absolute http or https URL", () => {
    expect(urlSyntaxProblem("hooks.example/sms")).toBe("must be an absolute http or https URL")
    expect(urlSyntaxProblem("ftp://hooks.example/sms")).toBe("must be an absolute http or https URL")
    expect(urlSyntaxProblem("javascript:alert(1)")).toBe("must be an absolute http or https URL")
  })
  it("refuses credentials in the URL, user or password alone", () => {
    expect(urlSyntaxProblem("https://user:pw@hooks.example/")).toBe("must not carry credentials")
    expect(urlSyntaxProblem("https://user@hooks.example/")).toBe("must not carry credentials")
    expect(urlSyntaxProblem("https://:pw@hooks.example/")).toBe("must not carry credentials")
  })
  it("takes at most 2048 characters", () => {
    expect(webhookUrlLengthMax).toBe(2048)
    const base = "https://hooks.example/"
    expect(urlSyntaxProblem(base + "a".repeat(2048 - base.length))).toBeUndefined()
    expect(urlSyntaxProblem(base + "a".repeat(2049 - base.length))).toBe("must be at most 2048 characters")
  })
})

describe("webhook retries", () => {
  it("wait 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then the delivery is failed", () => {
    expect(webhookRetryDelaysMs).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    expect(webhookRetryDelaysMs.map((_, i) => webhookRetryDelayMs(i + 1, 0))).toEqual([...webhookRetryDelaysMs])
    expect(webhookRetryDelayMs(8, 0)).toBeUndefined()
    expect(webhookRetryDelayMs(0, 0)).toBeUndefined()
  })
  it("add up to 10 % of jitter", () => {
    expect(webhookRetryJitterMax).toBe(0.1)
    expect(webhookRetryDelayMs(1, 0.5)).toBe(5_250)
    expect(webhookRetryDelayMs(2, 0.999)).toBe(Math.round(300_000 * 1.0999))
  })
})

describe("webhook events", () => {
  it("are the seven of docs/decisions.md#webhooks and the three of docs/two-way.md, message statuses from accepted on, at most 10 endpoints", () => {
    expect([...WebhookEventTypes].sort()).toEqual([
      "batch.completed",
      "contact.opted_in",
      "contact.opted_out",
      "message.accepted",
      "message.blocked",
      "message.delivered",
      "message.failed",
      "message.received",
      "message.undeliverable",
      "message.unknown"
    ])
    expect(webhookMessageStatuses).toEqual(["accepted", "delivered", "undeliverable", "failed", "blocked", "unknown"])
    expect(webhookEndpointsMax).toBe(10)
  })
})
