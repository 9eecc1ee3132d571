/**
 * The OneAPI simulator in-process, driven by a bare HTTP client (fetch): its tokens (issued,
 * refused, expired), the answer and receipt of each simulator test number, the 409 to a
 * correlator taken before (never a second SMS), its knobs (throttled, lost and unreadable
 * answers), receipts and inbound messages sent again until answered 2xx, its control route, and
 * stop / restart on the same port (docs/operators.md#the-oneapi-simulator).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loggableUrl } from "../../simulator/oneapi/Notifications.ts"
import { OneApiSim } from "../../simulator/oneapi/OneApiSim.ts"
import { eventually } from "../support/Eventually.ts"
import { basic, postSend, requestToken, sendBody, sendSms, tokenOf } from "./OneApiClient.ts"
import { NotifyReceiver, type Posted } from "./NotifyReceiver.ts"

const receiptDelayMs = 150
const slowMs = 400
const lateMs = 1000
/** Timers may fire a little early against performance.now(): the margin allowed. */
const earlyMs = 20

let sim: OneApiSim
let receiver: NotifyReceiver
let token: string
let counter = 0
const correlator = (): string => `corr-${Date.now()}-${++counter}`
const notifyUrl = (): string => receiver.url("/oneapi/receipts/s3cret")

beforeAll(async () => {
  sim = await OneApiSim.start({ receiptDelayMs, slowMs, lateMs, receiptRetryMs: 100 })
  receiver = await NotifyReceiver.start()
  token = await tokenOf(sim.tokenUrl)
})
afterAll(async () => {
  await sim.dispose()
  await receiver.close()
})

const receiptsOf = (callbackData: string): ReadonlyArray<Posted> =>
  receiver.where((b) => b?.deliveryInfoNotification?.callbackData === callbackData)

const receiptOf = (callbackData: string, status = "DeliveredToTerminal"): Promise<Posted> =>
  eventually(
    async () =>
      receiptsOf(callbackData).find((p) => p.body.deliveryInfoNotification.deliveryInfo.deliveryStatus === status),
    (p) => p !== undefined,
    { what: `the ${status} receipt of ${callbackData}` }
  ) as Promise<Posted>

const sentUnder = (c: string) => sim.sent.filter((s) => s.correlator === c)

describe("the OneAPI simulator's tokens", () => {
  it("issues a bearer token for the client's credentials and the client credentials grant", async () => {
    const before = sim.tokensIssued
    const answer = await requestToken(sim.tokenUrl)
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ token_type: "Bearer", access_token: expect.any(String), expires_in: 3600 })
    expect(answer.json.access_token.length).toBeGreaterThanOrEqual(32)
    expect(answer.json.access_token).not.toBe(token)
    expect(sim.tokensIssued).toBe(before + 1)
  })

  it("answers 401 invalid_client to wrong credentials, a wrong grant, no credentials, and everything while refusing", async () => {
    const refusals = [
      await requestToken(sim.tokenUrl, { authorization: basic("sim", "wrong") }),
      await requestToken(sim.tokenUrl, { authorization: basic("other", "sim") }),
      await requestToken(sim.tokenUrl, { grant: "password" }),
      await requestToken(sim.tokenUrl, { authorization: "Bearer sim" })
    ]
    sim.refuseTokens = true
    try {
      refusals.push(await requestToken(sim.tokenUrl))
    } finally {
      sim.refuseTokens = false
    }
    expect(refusals.map((a) => [a.status, a.json])).toEqual(Array(5).fill([401, { error: "invalid_client" }]))
    expect((await requestToken(sim.tokenUrl)).status).toBe(200)
  })

  it("answers a send with no token, an unknown one or an expired one 401 POL0001 and takes nothing", async () => {
    const stale = await tokenOf(sim.tokenUrl)
    sim.expireTokens()
    const c = correlator()
    const body = sendBody({ to: "+261340000001", correlator: c })
    const answers = [
      await postSend(sim.baseUrl, undefined, body),
      await postSend(sim.baseUrl, "not-a-token", body),
      await postSend(sim.baseUrl, stale, body)
    ]
    expect(answers.map((a) => [a.status, a.json])).toEqual(
      Array(3).fill([
        401,
        { requestError: { policyException: { messageId: "POL0001", text: "invalid or expired token" } } }
      ])
    )
    expect(sentUnder(c)).toEqual([])
    expect(sim.requests.filter((r) => r.correlator === c).map((r) => r.status)).toEqual([401, 401, 401])
    token = await tokenOf(sim.tokenUrl)
    expect((await postSend(sim.baseUrl, token, body)).status).toBe(201)
    expect(sentUnder(c)).toHaveLength(1)
  })

  it("expires a token after its lifetime", async () => {
    const shortLived = await OneApiSim.start({ tokenTtlS: 1 })
    try {
      const answer = await requestToken(shortLived.tokenUrl)
      expect(answer.json.expires_in).toBe(1)
      const refused = { to: "+261340000003", correlator: correlator() }
      expect((await sendSms(shortLived.baseUrl, answer.json.access_token, refused)).status).toBe(400)
      const later = await eventually(
        () => sendSms(shortLived.baseUrl, answer.json.access_token, refused),
        (a) => a.status !== 400,
        { timeoutMs: 5000, what: "the token expired" }
      )
      expect(later.status).toBe(401)
    } finally {
      await shortLived.dispose()
    }
  })
})

describe("the OneAPI simulator's numbers", () => {
  it("+261340000001: 201 with the resource URL, then DeliveredToTerminal after the receipt delay", async () => {
    const c = correlator()
    const sentAt = performance.now()
    const answer = await sendSms(sim.baseUrl, token, {
      to: "+261340000001",
      correlator: c,
      notifyUrl: notifyUrl(),
      text: "Manao ahoana"
    })
    expect(answer.status).toBe(201)
    const [sms] = sentUnder(c)
    expect(sms).toEqual({
      id: expect.stringMatching(/^\d{10,}$/),
      correlator: c,
      to: "+261340000001",
      text: "Manao ahoana",
      senderAddress: "tel:+2610000",
      senderName: "DEMO"
    })
    expect(Number(sms!.id)).toBeGreaterThanOrEqual(1_000_000_000)
    const resourceURL = `${sim.baseUrl}/smsmessaging/v1/outbound/tel%3A%2B2610000/requests/${sms!.id}`
    expect(answer.headers.get("location")).toBe(resourceURL)
    expect(answer.json).toEqual({
      outboundSMSMessageRequest: {
        ...sendBody({ to: "+261340000001", correlator: c, notifyUrl: notifyUrl(), text: "Manao ahoana" })
          .outboundSMSMessageRequest,
        resourceURL
      },
      resourceReference: { resourceURL }
    })
    const receipt = await receiptOf(c)
    expect(receipt.at - sentAt).toBeGreaterThanOrEqual(receiptDelayMs - earlyMs)
    expect(receipt.path).toBe("/oneapi/receipts/s3cret")
    expect(receipt.body).toEqual({
      deliveryInfoNotification: {
        deliveryInfo: { address: "tel:+261340000001", deliveryStatus: "DeliveredToTerminal" },
        callbackData: c
      }
    })
    expect(receiptsOf(c)).toHaveLength(1)
  })

  it("+261340000002: 201, then DeliveryImpossible", async () => {
    const c = correlator()
    expect(
      (await sendSms(sim.baseUrl, token, { to: "+261340000002", correlator: c, notifyUrl: notifyUrl() })).status
    ).toBe(201)
    const receipt = await receiptOf(c, "DeliveryImpossible")
    expect(receipt.body.deliveryInfoNotification.deliveryInfo).toEqual({
      address: "tel:+261340000002",
      deliveryStatus: "DeliveryImpossible"
    })
    expect(receiptsOf(c)).toHaveLength(1)
    expect(sentUnder(c)).toHaveLength(1)
  })

  it("+261340000003: 400 POL0003 every time, never taken", async () => {
    const c = correlator()
    const send = { to: "+261340000003", correlator: c, notifyUrl: notifyUrl() }
    const answers = [await sendSms(sim.baseUrl, token, send), await sendSms(sim.baseUrl, token, send)]
    expect(answers.map((a) => [a.status, a.json])).toEqual(
      Array(2).fill([400, { requestError: { policyException: { messageId: "POL0003", text: "Recipient refused" } } }])
    )
    expect(sentUnder(c)).toEqual([])
  })

  it("+261340000004: taken at once but answered 201 only after the late delay; its correlator meanwhile 409", async () => {
    const c = correlator()
    const send = { to: "+261340000004", correlator: c, notifyUrl: notifyUrl() }
    const late = sendSms(sim.baseUrl, token, send)
    await eventually(
      async () => sentUnder(c).length,
      (n) => n === 1,
      { what: "the late message taken" }
    )
    const again = await sendSms(sim.baseUrl, token, send)
    expect(again.status).toBe(409)
    expect(again.elapsedMs).toBeLessThan(lateMs)
    const answer = await late
    expect(answer.status).toBe(201)
    expect(answer.elapsedMs).toBeGreaterThanOrEqual(lateMs - earlyMs)
    expect(answer.headers.get("location")).toMatch(new RegExp(`/requests/${sentUnder(c)[0]!.id}$`))
    await receiptOf(c)
    expect(sentUnder(c)).toHaveLength(1)
  })

  it("+261340000005: 429 with Retry-After: 1 every time, never taken", async () => {
    const c = correlator()
    const send = { to: "+261340000005", correlator: c, notifyUrl: notifyUrl() }
    const answers = [await sendSms(sim.baseUrl, token, send), await sendSms(sim.baseUrl, token, send)]
    expect(answers.map((a) => [a.status, a.headers.get("retry-after")])).toEqual([
      [429, "1"],
      [429, "1"]
    ])
    expect(answers[0]!.json.message).toBe("Too many requests")
    expect(sentUnder(c)).toEqual([])
  })

  it("+261340000006: 201 and no receipt ever (a message sent after it has had its own)", async () => {
    const silent = correlator()
    const witness = correlator()
    expect(
      (await sendSms(sim.baseUrl, token, { to: "+261340000006", correlator: silent, notifyUrl: notifyUrl() })).status
    ).toBe(201)
    expect(
      (await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: witness, notifyUrl: notifyUrl() })).status
    ).toBe(201)
    await receiptOf(witness)
    expect(receiptsOf(silent)).toEqual([])
    expect(sentUnder(silent)).toHaveLength(1)
  })

  it("+261340000007: 201 after the slow delay, then DeliveredToTerminal", async () => {
    const c = correlator()
    const answer = await sendSms(sim.baseUrl, token, { to: "+261340000007", correlator: c, notifyUrl: notifyUrl() })
    expect(answer.status).toBe(201)
    expect(answer.elapsedMs).toBeGreaterThanOrEqual(slowMs - earlyMs)
    expect(answer.elapsedMs).toBeLessThan(lateMs)
    await receiptOf(c)
  })

  it("+261340000008: 500 after the late delay at first, then 400 SVC0001 for its correlator; never taken", async () => {
    const c = correlator()
    const send = { to: "+261340000008", correlator: c, notifyUrl: notifyUrl() }
    const first = await sendSms(sim.baseUrl, token, send)
    expect(first.status).toBe(500)
    expect(first.elapsedMs).toBeGreaterThanOrEqual(lateMs - earlyMs)
    const later = [await sendSms(sim.baseUrl, token, send), await sendSms(sim.baseUrl, token, send)]
    expect(later.map((a) => [a.status, a.json])).toEqual(
      Array(2).fill([
        400,
        { requestError: { serviceException: { messageId: "SVC0001", text: "recipient unreachable" } } }
      ])
    )
    expect(later[0]!.elapsedMs).toBeLessThan(lateMs)
    expect(sentUnder(c)).toEqual([])
    // another correlator starts over
    const other = await sendSms(sim.baseUrl, token, { ...send, correlator: correlator() })
    expect(other.status).toBe(500)
  })

  it("+261340000009: never answered, every time, never taken", async () => {
    const c = correlator()
    const send = { to: "+261340000009", correlator: c, notifyUrl: notifyUrl() }
    for (let i = 0; i < 2; i++) {
      await expect(sendSms(sim.baseUrl, token, send, AbortSignal.timeout(300))).rejects.toThrow(/aborted/i)
    }
    const records = sim.requests.filter((r) => r.correlator === c)
    expect(records.map((r) => r.status)).toEqual([undefined, undefined])
    expect(sentUnder(c)).toEqual([])
  })

  it("+261340000010 and +261340000011: delivered, then an inbound OK or STOP to the sender, one receipt delay after the receipt", async () => {
    const ok = correlator()
    const stop = correlator()
    const sentAt = performance.now()
    expect(
      (
        await sendSms(sim.baseUrl, token, {
          to: "+261340000010",
          correlator: ok,
          notifyUrl: notifyUrl(),
          senderName: "DEMO"
        })
      ).status
    ).toBe(201)
    expect(
      (
        await sendSms(sim.baseUrl, token, {
          to: "+261340000011",
          correlator: stop,
          notifyUrl: notifyUrl(),
          senderName: undefined,
          senderAddress: "tel:+2610042"
        })
      ).status
    ).toBe(201)
    const inboundFrom = (number: string) =>
      eventually(
        async () =>
          receiver.where((b) => b?.inboundSMSMessageNotification?.inboundSMSMessage?.senderAddress === `tel:${number}`),
        (posts) => posts.length > 0,
        { what: `the inbound message from ${number}` }
      )
    const [okInbound] = await inboundFrom("+261340000010")
    const [stopInbound] = await inboundFrom("+261340000011")
    expect(okInbound!.path).toBe("/oneapi/inbound/s3cret")
    expect(okInbound!.body.inboundSMSMessageNotification.inboundSMSMessage).toEqual({
      dateTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      destinationAddress: "DEMO",
      messageId: expect.stringMatching(/^\d+$/),
      message: "OK",
      senderAddress: "tel:+261340000010"
    })
    expect(stopInbound!.body.inboundSMSMessageNotification.inboundSMSMessage).toMatchObject({
      destinationAddress: "+2610042",
      message: "STOP"
    })
    const receipt = await receiptOf(ok)
    // the receipt one delay after the send, the answer one more after it
    expect(receipt.at - sentAt).toBeGreaterThanOrEqual(receiptDelayMs - earlyMs)
    expect(okInbound!.at - sentAt).toBeGreaterThanOrEqual(2 * receiptDelayMs - earlyMs)
    expect(okInbound!.at).toBeGreaterThan(receipt.at)
    await receiptOf(stop)
  })

  it("any other number: 201, then DeliveredToTerminal", async () => {
    const c = correlator()
    expect(
      (await sendSms(sim.baseUrl, token, { to: "+261331234567", correlator: c, notifyUrl: notifyUrl() })).status
    ).toBe(201)
    const receipt = await receiptOf(c)
    expect(receipt.body.deliveryInfoNotification.deliveryInfo.address).toBe("tel:+261331234567")
  })

  it("sends no receipt to a request that asked for none", async () => {
    const silent = correlator()
    const witness = correlator()
    expect(
      (await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: silent, callbackData: silent })).status
    ).toBe(201)
    expect(
      (await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: witness, notifyUrl: notifyUrl() })).status
    ).toBe(201)
    await receiptOf(witness)
    expect(receiptsOf(silent)).toEqual([])
  })
})

describe("the OneAPI simulator's refusals", () => {
  it("answers a correlator already taken 409 SVC0005, whatever the number, and sends nothing again", async () => {
    const c = correlator()
    const first = await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c, notifyUrl: notifyUrl() })
    expect(first.status).toBe(201)
    const again = [
      await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c, notifyUrl: notifyUrl() }),
      await sendSms(sim.baseUrl, token, { to: "+261340000002", correlator: c, notifyUrl: notifyUrl(), text: "other" })
    ]
    expect(again.map((a) => [a.status, a.json])).toEqual(
      Array(2).fill([
        409,
        {
          requestError: {
            serviceException: { messageId: "SVC0005", text: "Duplicate clientCorrelator %1", variables: [c] }
          }
        }
      ])
    )
    expect(sentUnder(c)).toHaveLength(1)
    await receiptOf(c)
    const witness = correlator()
    await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: witness, notifyUrl: notifyUrl() })
    await receiptOf(witness)
    expect(receiptsOf(c)).toHaveLength(1)
  })

  it("answers a body that does not match 400 SVC0002 naming the part, and takes nothing", async () => {
    const c = correlator()
    const good = sendBody({ to: "+261340000001", correlator: c, notifyUrl: notifyUrl() })
    const r = good.outboundSMSMessageRequest
    const variants: ReadonlyArray<readonly [unknown, string, { senderAddress?: string; contentType?: string }?]> = [
      ["not json", "outboundSMSMessageRequest"],
      [{ other: r }, "outboundSMSMessageRequest"],
      [{ outboundSMSMessageRequest: { ...r, address: "tel:+261340000001" } }, "address"],
      [{ outboundSMSMessageRequest: { ...r, address: ["tel:+261340000001", "tel:+261340000002"] } }, "address"],
      [{ outboundSMSMessageRequest: { ...r, address: ["+261340000001"] } }, "address"],
      [{ outboundSMSMessageRequest: { ...r, senderAddress: "2610000" } }, "senderAddress"],
      [good, "senderAddress", { senderAddress: "tel:+2619999" }],
      [{ outboundSMSMessageRequest: { ...r, senderName: "A NAME TOO LONG" } }, "senderName"],
      [{ outboundSMSMessageRequest: { ...r, outboundSMSTextMessage: "Salama" } }, "outboundSMSTextMessage"],
      [{ outboundSMSMessageRequest: { ...r, outboundSMSTextMessage: { message: "" } } }, "message"],
      [{ outboundSMSMessageRequest: { ...r, clientCorrelator: 42 } }, "clientCorrelator"],
      [{ outboundSMSMessageRequest: { ...r, receiptRequest: { notifyURL: "ftp://x/y" } } }, "notifyURL"],
      [
        { outboundSMSMessageRequest: { ...r, receiptRequest: { notifyURL: notifyUrl(), callbackData: 7 } } },
        "callbackData"
      ],
      [good, "Content-Type", { contentType: "text/plain" }]
    ]
    for (const [body, field, options] of variants) {
      const answer = await postSend(sim.baseUrl, token, body, options)
      expect([answer.status, answer.json], field).toEqual([
        400,
        {
          requestError: {
            serviceException: {
              messageId: "SVC0002",
              text: "Invalid input value for message part %1",
              variables: [field]
            }
          }
        }
      ])
    }
    expect(sentUnder(c)).toEqual([])
    expect((await postSend(sim.baseUrl, token, good)).status).toBe(201)
  })

  it("answers an unknown route 404 and another method 405", async () => {
    expect((await fetch(`${sim.baseUrl}/smsmessaging/v1/inbound`)).status).toBe(404)
    expect((await fetch(sim.tokenUrl)).status).toBe(405)
  })
})

describe("the OneAPI simulator's knobs", () => {
  it("throttleNext(n): the next n sends are answered 429 whatever the number, none taken", async () => {
    sim.throttleNext(2)
    const cs = [correlator(), correlator(), correlator()]
    const answers = []
    for (const c of cs) answers.push(await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c }))
    expect(answers.map((a) => [a.status, a.headers.get("retry-after")])).toEqual([
      [429, "1"],
      [429, "1"],
      [201, null]
    ])
    expect(cs.map((c) => sentUnder(c).length)).toEqual([0, 0, 1])
  })

  it("dropNextAnswers(n): takes the message, closes the connection unanswered; its correlator then answers 409", async () => {
    const c = correlator()
    sim.dropNextAnswers(1)
    await expect(
      sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c, notifyUrl: notifyUrl() })
    ).rejects.toThrow()
    expect(sentUnder(c)).toHaveLength(1)
    expect(sim.requests.filter((r) => r.correlator === c).map((r) => r.status)).toEqual([undefined])
    const again = await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c, notifyUrl: notifyUrl() })
    expect(again.status).toBe(409)
    await receiptOf(c)
    expect(sentUnder(c)).toHaveLength(1)
    const next = correlator()
    expect((await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: next })).status).toBe(201)
  })

  it("unreadableNextAnswers(n): takes the message and answers 201 with a body that is not JSON, without Location", async () => {
    const c = correlator()
    sim.unreadableNextAnswers(1)
    const answer = await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c })
    expect(answer.status).toBe(201)
    expect(answer.json).toBeUndefined()
    expect(answer.text.length).toBeGreaterThan(0)
    expect(answer.headers.get("location")).toBeNull()
    expect(sentUnder(c)).toHaveLength(1)
    expect((await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c })).status).toBe(409)
    expect(sentUnder(c)).toHaveLength(1)
    const next = await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: correlator() })
    expect(next.json.resourceReference.resourceURL).toBe(next.headers.get("location"))
  })

  it("intermediateReceipts: DeliveredToNetwork at the answer, then the final receipt", async () => {
    sim.intermediateReceipts = true
    const c = correlator()
    try {
      expect(
        (await sendSms(sim.baseUrl, token, { to: "+261340000002", correlator: c, notifyUrl: notifyUrl() })).status
      ).toBe(201)
    } finally {
      sim.intermediateReceipts = false
    }
    await receiptOf(c, "DeliveryImpossible")
    expect(receiptsOf(c).map((p) => p.body.deliveryInfoNotification.deliveryInfo.deliveryStatus)).toEqual([
      "DeliveredToNetwork",
      "DeliveryImpossible"
    ])
  })
})

describe("the OneAPI simulator's notifications", () => {
  it("sends a receipt again, with backoff, until answered 2xx (a 4xx included), then owes it no more", async () => {
    const c = correlator()
    receiver.failNext(500, 404)
    expect(
      (await sendSms(sim.baseUrl, token, { to: "+261340000001", correlator: c, notifyUrl: notifyUrl() })).status
    ).toBe(201)
    expect(sim.receiptsOwed).toBe(1)
    const answers = await eventually(
      async () => sim.receiptAnswers.filter((a) => a.callbackData === c).map((a) => a.status),
      (statuses) => statuses.includes(200),
      { what: "the receipt taken" }
    )
    expect(answers).toEqual([500, 404, 200])
    const posts = receiptsOf(c)
    expect(posts.map((p) => p.status)).toEqual([500, 404, 200])
    // sent again 100 ms later, then 200 ms later
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(100 - earlyMs)
    expect(posts[2]!.at - posts[1]!.at).toBeGreaterThanOrEqual(200 - earlyMs)
    expect(sim.receiptsOwed).toBe(0)
  })

  it("sends an inbound message on demand, again until answered 2xx, and through its control route", async () => {
    receiver.failNext(503)
    const url = receiver.url("/oneapi/inbound/other")
    const messageId = sim.sendMobileOriginated({ from: "+261341234567", to: "4242", text: "Veloma", notifyUrl: url })
    const posts = await eventually(
      async () => receiver.where((b) => b?.inboundSMSMessageNotification?.inboundSMSMessage?.messageId === messageId),
      (p) => p.some((x) => x.status === 200),
      { what: "the inbound message taken" }
    )
    expect(posts.map((p) => [p.path, p.status])).toEqual([
      ["/oneapi/inbound/other", 503],
      ["/oneapi/inbound/other", 200]
    ])
    expect(posts[1]!.body.inboundSMSMessageNotification.inboundSMSMessage).toMatchObject({
      destinationAddress: "4242",
      message: "Veloma",
      senderAddress: "tel:+261341234567"
    })
    expect(sim.mobileOriginatedAnswers.filter((a) => a.messageId === messageId).map((a) => a.status)).toEqual([
      503, 200
    ])

    const control = await fetch(`${sim.baseUrl}/simulator/mobile-originated`, {
      method: "POST",
      body: JSON.stringify({ from: "+261341234568", to: "DEMO", text: "STOP" })
    })
    expect(control.status).toBe(202)
    const { message_id } = (await control.json()) as { message_id: string }
    const [viaControl] = await eventually(
      async () => receiver.where((b) => b?.inboundSMSMessageNotification?.inboundSMSMessage?.messageId === message_id),
      (p) => p.length > 0,
      { what: "the control route's inbound message" }
    )
    // no notify_url: beside the last receipt URL a send gave
    expect(viaControl!.path).toBe("/oneapi/inbound/s3cret")
    const refused = await fetch(`${sim.baseUrl}/simulator/mobile-originated`, {
      method: "POST",
      body: JSON.stringify({ from: "261341234568", to: "DEMO", text: "STOP" })
    })
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: string }).error).toMatch(/^from:/)
  })

  it("refuses an inbound message it has nowhere to send", async () => {
    const bare = await OneApiSim.start({})
    try {
      expect(() => bare.sendMobileOriginated({ from: "+261341234567", to: "4242", text: "x" })).toThrow(
        /no inbound URL/
      )
      const answer = await fetch(`${bare.baseUrl}/simulator/mobile-originated`, {
        method: "POST",
        body: JSON.stringify({ from: "+261341234567", to: "4242", text: "x" })
      })
      expect(answer.status).toBe(400)
      expect(((await answer.json()) as { error: string }).error).toMatch(/^notify_url:/)
    } finally {
      await bare.dispose()
    }
  })
})

describe("the OneAPI simulator stopped and restarted", () => {
  it("refuses connections while stopped, cuts a held request, and serves again on the same port with what it knew", async () => {
    const own = await OneApiSim.start({ receiptDelayMs, lateMs })
    try {
      const ownToken = await tokenOf(own.tokenUrl)
      const c = correlator()
      expect((await sendSms(own.baseUrl, ownToken, { to: "+261340000001", correlator: c })).status).toBe(201)
      const held = sendSms(own.baseUrl, ownToken, { to: "+261340000009", correlator: correlator() })
      await eventually(
        async () => own.requests.length,
        (n) => n === 2,
        { what: "the held request received" }
      )
      const port = own.port
      await own.stop()
      await expect(held).rejects.toThrow()
      await expect(fetch(own.tokenUrl, { method: "POST" })).rejects.toThrow()
      await own.restart()
      expect(own.port).toBe(port)
      expect((await sendSms(own.baseUrl, ownToken, { to: "+261340000001", correlator: c })).status).toBe(409)
      expect((await sendSms(own.baseUrl, ownToken, { to: "+261340000001", correlator: correlator() })).status).toBe(201)
    } finally {
      await own.dispose()
    }
  })
})

describe("the OneAPI simulator's logs", () => {
  it("show a notify URL without its secret", () => {
    expect(loggableUrl("http://sms.test:3000/providers/orange/receipts/AbC-123_x")).toBe(
      "http://sms.test:3000/providers/orange/receipts/***"
    )
    expect(loggableUrl("https://sms.example/base/providers/orange/inbound/s3cr3t?x=1")).toBe(
      "https://sms.example/base/providers/orange/inbound/***?x=1"
    )
    expect(loggableUrl("http://receiver.test/hooks")).toBe("http://receiver.test/hooks")
  })
})
