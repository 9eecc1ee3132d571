/** The service's values as the public API shows them (src/http/Representations.ts): field names and formats of docs/integrators.md#messages, 2.7. */
import { describe, expect, it } from "vitest"
import type { MessageRow } from "../../src/messages/MessageRow.ts"
import {
  balanceOf,
  batchLocation,
  batchOf,
  messageLocation,
  messageOf,
  webhookDeliveryOf,
  webhookLocation,
  webhookOf
} from "../../src/http/Representations.ts"

describe("representations", () => {
  it("a balance names each field as the spec does", () => {
    expect(balanceOf({ total: 10, reserved: 3, available: 7, validUntil: "2026-02-01" })).toEqual({
      total: 10,
      reserved: 3,
      available: 7,
      valid_until: "2026-02-01"
    })
    expect(balanceOf({ total: 0, reserved: 0, available: 0, validUntil: null })).toEqual({
      total: 0,
      reserved: 0,
      available: 0,
      valid_until: null
    })
  })

  it("a message shows its recipient as `to`, its times in RFC 3339 UTC or null, nothing of its organisation", () => {
    const id = "5d1f4b3a-0c9e-4f8e-9a7b-2c3d4e5f6a7b"
    const row: MessageRow = {
      organisationId: "org",
      id,
      batchId: null,
      toNumber: "+261340000001",
      senderName: "INFO",
      text: "Salama",
      segments: 1,
      status: "delivered",
      sendAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
      deliveryTime: null,
      erasedAt: null
    }
    expect(messageOf(row)).toEqual({
      id,
      to: "+261340000001",
      sender_name: "INFO",
      status: "delivered",
      segments: 1,
      send_at: "2026-01-02T03:04:05.000Z",
      delivery_time: null
    })
    expect(messageLocation(id)).toBe(`/api/sms/v2/messages/${id}/`)
    // an immediate message (no send_at) that was delivered
    expect(messageOf({ ...row, sendAt: null, deliveryTime: new Date(Date.UTC(2026, 0, 2, 3, 4, 6)) })).toEqual({
      id,
      to: "+261340000001",
      sender_name: "INFO",
      status: "delivered",
      segments: 1,
      send_at: null,
      delivery_time: "2026-01-02T03:04:06.000Z"
    })
  })

  it("a webhook endpoint shows its fields and never a secret; a delivery its event id as evt_ and its times", () => {
    const endpoint = {
      id: "w",
      url: "https://hooks.example/sms",
      events: ["message.delivered"],
      description: null,
      enabled: true,
      createdAt: new Date(Date.UTC(2026, 0, 3))
    }
    expect(webhookOf(endpoint)).toEqual({
      id: "w",
      url: "https://hooks.example/sms",
      events: ["message.delivered"],
      description: null,
      enabled: true,
      created_at: "2026-01-03T00:00:00.000Z"
    })
    expect(webhookLocation("w")).toBe("/api/sms/v2/webhooks/w/")
    const delivery = {
      eventId: "e1",
      type: "message.delivered",
      state: "pending" as const,
      attempts: 2,
      lastStatusCode: 503,
      lastError: "busy",
      nextAttemptAt: new Date(Date.UTC(2026, 0, 3, 0, 5)),
      createdAt: new Date(Date.UTC(2026, 0, 3))
    }
    expect(webhookDeliveryOf(delivery)).toEqual({
      event_id: "evt_e1",
      type: "message.delivered",
      state: "pending",
      attempts: 2,
      last_status_code: 503,
      last_error: "busy",
      next_attempt_at: "2026-01-03T00:05:00.000Z",
      created_at: "2026-01-03T00:00:00.000Z"
    })
    expect(webhookDeliveryOf({ ...delivery, state: "succeeded", nextAttemptAt: null }).next_attempt_at).toBeNull()
  })

  it("a batch shows its counts and its times in UTC", () => {
    const counts = {
      scheduled: 1,
      processing: 0,
      accepted: 0,
      delivered: 1,
      undeliverable: 0,
      blocked: 0,
      failed: 0,
      unknown: 0
    }
    expect(
      batchOf({
        id: "b",
        recipientCount: 2,
        creditsReserved: 4,
        sendAt: new Date(Date.UTC(2026, 0, 2)),
        createdAt: new Date(Date.UTC(2026, 0, 1)),
        counts
      })
    ).toEqual({
      id: "b",
      recipient_count: 2,
      credits_reserved: 4,
      send_at: "2026-01-02T00:00:00.000Z",
      created_at: "2026-01-01T00:00:00.000Z",
      counts
    })
    expect(batchLocation("b")).toBe("/api/sms/v2/message-batches/b/")
  })
})
