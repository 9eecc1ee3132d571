/**
 * An organisation of a served process with an API key that may manage webhooks, and its endpoint
 * subscribed to every event type, pointing at a local receiver that then knows its secret.
 */
import { expect } from "vitest"
import type { Served } from "../../support/ServedProcess.ts"
import type { WebhookReceiver } from "../../support/WebhookReceiver.ts"
import { withWebhooks } from "../../webhooks/support.ts"

export interface Subscribed {
  readonly orgId: string
  readonly apiKey: string
  readonly endpointId: string
  readonly receiver: WebhookReceiver
}

/** A new organisation with `credits`, its endpoint (every event type) at `receiver`. */
export const subscribedOrg = async (
  served: Served,
  receiver: WebhookReceiver,
  credits: number
): Promise<Subscribed> => {
  const { orgId, apiKey } = await served.newOrg({ credits, permissions: withWebhooks })
  const created = await served.call("POST", "/api/sms/v2/webhooks/", {
    token: apiKey,
    headers: { "idempotency-key": `endpoint-${orgId}` },
    body: { url: receiver.url, description: "fault suite receiver" }
  })
  expect(created.status, created.text).toBe(201)
  receiver.secret = created.body.secret
  return { orgId, apiKey, endpointId: created.body.id, receiver }
}
