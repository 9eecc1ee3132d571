/**
 * The notify routes alone (src/http/ProviderNotifications.ts) over a fake inbox and message
 * store, for what the whole service cannot easily show: a database that cannot read or store is
 * 503 with Retry-After, never a 500; what is stored is the receipt the inbox expects (the
 * message's own provider ref and number) and the inbound part as docs/two-way.md reads it. And the
 * secret itself: 32 characters, one per entry and client secret, never in a logged path.
 */
import { Effect, Layer, Redacted } from "effect"
import { HttpRouter } from "effect/http"
import { afterEach, describe, expect, it } from "vitest"
import { AppConfig } from "../../../src/config/Config.ts"
import type { OneApiRouteSettings } from "../../../src/config/OneApiSettings.ts"
import { DatabaseUnavailable } from "../../../src/db/DatabaseUnavailable.ts"
import { decodeText } from "../../../src/domain/DataCoding.ts"
import { loggablePath } from "../../../src/http/NotifyPaths.ts"
import { ProviderNotificationRoutes } from "../../../src/http/ProviderNotifications.ts"
import type { ProviderRefOf } from "../../../src/messages/MessageReads.ts"
import { MessageStore } from "../../../src/messages/MessageStore.ts"
import { notifySecret } from "../../../src/provider/oneapi/NotifySecret.ts"
import { testConfig } from "../../support/TestApp.ts"
import { FakeInbox } from "../smpp/support.ts"

const settings: OneApiRouteSettings = {
  name: "orange",
  baseUrl: "http://fake",
  tokenUrl: "http://fake/oauth/token",
  clientId: "client",
  clientSecret: Redacted.make("client-secret"),
  senderAddress: "tel:+2610000",
  prefixes: ["+26132"],
  mps: 0,
  verifyByCorrelator: false,
  fallback: undefined
}
const secret = notifySecret("orange", settings.clientSecret)
const messageId = "01a24ca5-e8c9-75df-a60e-f289c984b915"

/** What the fake store answers, or a database outage. */
let stored: ProviderRefOf | undefined | "down"

const storeLayer = Layer.succeed(MessageStore)({
  providerRefOf: () =>
    stored === "down" ? Effect.fail(new DatabaseUnavailable("down (test)")) : Effect.succeed(stored)
} as unknown as typeof MessageStore.Service)

const handlers: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const h of handlers.splice(0)) await h.dispose()
})

/** The routes over `inbox`, answering fetch-style. */
const routesOver = (inbox: FakeInbox) => {
  const web = HttpRouter.toWebHandler(
    ProviderNotificationRoutes.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          inbox.layer,
          storeLayer,
          Layer.succeed(AppConfig)(
            testConfig({
              provider: "smpp",
              smpp: {
                routes: [],
                oneapi: [settings],
                responseTimeoutMs: 1000,
                timing: {
                  enquireLinkIntervalMs: 1,
                  reconnectInitialMs: 1,
                  reconnectMaxMs: 1,
                  throttleInitialMs: 1,
                  throttleMaxMs: 1
                }
              }
            })
          )
        )
      )
    ),
    { disableLogger: true }
  )
  handlers.push(web)
  return async (kind: "receipts" | "inbound", body: unknown) => {
    const res = await web.handler(
      new Request(`http://test/providers/orange/${kind}/${secret}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    )
    if (res.status === 500) throw new Error(await res.text())
    return res
  }
}

const delivered = {
  deliveryInfoNotification: {
    deliveryInfo: { address: "tel:+261320000001", deliveryStatus: "DeliveredToTerminal" },
    callbackData: messageId
  }
}
const accepted: ProviderRefOf = {
  organisationId: "00000000-0000-7000-8000-000000000001",
  providerRef: "orange:req-9",
  toNumber: "+261320000001",
  status: "accepted"
}

describe("the notify routes over a fake inbox", () => {
  it("stores a final receipt under the message's own provider ref and number before the 204", async () => {
    stored = accepted
    const inbox = new FakeInbox()
    const res = await routesOver(inbox)("receipts", delivered)
    expect(res.status).toBe(204)
    expect(inbox.receipts).toHaveLength(1)
    expect(inbox.receipts[0]).toMatchObject({
      providerRef: "orange:req-9",
      outcome: "delivered",
      recipient: "+261320000001",
      submittedAt: null
    })
  })

  it("answers 503 with Retry-After, never 500, when the database cannot read the message or store the receipt", async () => {
    const inbox = new FakeInbox()
    const post = routesOver(inbox)
    stored = "down"
    const unread = await post("receipts", delivered)
    expect(unread.status).toBe(503)
    expect(unread.headers.get("retry-after")).toBe("2")
    stored = accepted
    inbox.refuseReceipts = 1
    const unstored = await post("receipts", delivered)
    expect(unstored.status).toBe(503)
    expect(unstored.headers.get("retry-after")).toBe("2")
    expect(inbox.receipts).toHaveLength(0)
    inbox.refuseParts = 1
    const inbound = await post("inbound", {
      inboundSMSMessageNotification: {
        inboundSMSMessage: { destinationAddress: "tel:+2610000", message: "x", senderAddress: "tel:+261340000011" }
      }
    })
    expect(inbound.status).toBe(503)
    expect(inbox.parts).toHaveLength(0)
  })

  it("keeps an unknown send's receipt as evidence of acceptance, and answers 503 so it is told again", async () => {
    stored = { ...accepted, providerRef: null, status: "unknown" }
    const inbox = new FakeInbox()
    const res = await routesOver(inbox)("receipts", delivered)
    expect(res.status).toBe(503)
    expect(inbox.receipts).toHaveLength(0)
    expect(inbox.lateResults).toEqual([
      {
        organisationId: accepted.organisationId,
        messageId,
        result: { _tag: "Accepted", providerRef: `orange:c:${messageId}` }
      }
    ])
  })

  it("waits for a send whose answer is not recorded yet: 503, no evidence", async () => {
    stored = { ...accepted, providerRef: null, status: "processing" }
    const inbox = new FakeInbox()
    const res = await routesOver(inbox)("receipts", delivered)
    expect(res.status).toBe(503)
    expect(inbox.lateResults).toHaveLength(0)
  })

  it("stores an inbound message as one whole part in UCS-2, the addresses without tel:", async () => {
    const inbox = new FakeInbox()
    const res = await routesOver(inbox)("inbound", {
      inboundSMSMessageNotification: {
        inboundSMSMessage: {
          dateTime: "2026-12-06T10:00:00Z",
          destinationAddress: "tel:+2610000",
          messageId: "mo-1",
          message: "STOP 😀",
          senderAddress: "tel:0340000011"
        }
      }
    })
    expect(res.status).toBe(204)
    const [part] = inbox.parts
    expect(part && { ...part, octets: decodeText(part.dataCoding, part.octets).text }).toEqual({
      source: "orange",
      from: "+261340000011",
      to: "+2610000",
      dataCoding: 8,
      position: undefined,
      octets: "STOP 😀"
    })
  })
})

describe("the notify secret", () => {
  it("is 32 base64url characters, different per entry and per client secret", () => {
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(notifySecret("telma", settings.clientSecret)).not.toBe(secret)
    expect(notifySecret("orange", Redacted.make("another"))).not.toBe(secret)
    expect(notifySecret("orange", Redacted.make("client-secret"))).toBe(secret)
  })

  it("never appears in a logged path", () => {
    expect(loggablePath(`/providers/orange/receipts/${secret}`)).toBe("/providers/orange/receipts/***")
    expect(loggablePath(`/providers/orange/inbound/${secret}?x=1`)).not.toContain(secret)
    expect(loggablePath("/api/sms/v2/messages/")).toBe("/api/sms/v2/messages/")
  })
})
