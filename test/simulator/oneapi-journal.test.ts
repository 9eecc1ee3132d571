/**
 * The OneAPI simulator with a data directory, in-process: a new OneApiSim on the directory of a
 * disposed one still answers 409 to every correlator taken before (a replay after a crash never
 * makes a second SMS) and 400 SVC0001 to a +261340000008 correlator seen before, gives ids above
 * the old ones, sends the receipts still owed under their callback data, keeps the tokens issued
 * (and those expired, expired), and forgets a receipt once it is answered 2xx.
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { OneApiSim } from "../../simulator/oneapi/OneApiSim.ts"
import { eventually } from "../support/Eventually.ts"
import { NotifyReceiver } from "./NotifyReceiver.ts"
import { sendSms, tokenOf } from "./OneApiClient.ts"

const dataDir = mkdtempSync(join(tmpdir(), "oneapi-journal-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const start = () => OneApiSim.start({ dataDir, receiptDelayMs: 100, lateMs: 100, receiptRetryMs: 60_000 })

describe("the OneAPI simulator with a data directory", () => {
  it("carries its correlators, ids, owed receipts and tokens over to a new OneApiSim on the same directory", async () => {
    const receiver = await NotifyReceiver.start()
    const notifyURL = receiver.url("/oneapi/receipts/k")
    try {
      const first = await start()
      const expired = await tokenOf(first.tokenUrl)
      first.expireTokens()
      const token = await tokenOf(first.tokenUrl)
      receiver.failNext(503, 503)
      const send = (to: string, correlator: string) =>
        sendSms(first.baseUrl, token, { to, correlator, notifyUrl: notifyURL })
      expect((await send("+261340000001", "delivered")).status).toBe(201)
      expect((await send("+261340000002", "impossible")).status).toBe(201)
      expect((await send("+261340000006", "silent")).status).toBe(201)
      expect((await send("+261340000008", "unreachable")).status).toBe(500)
      await eventually(
        async () => first.receiptAnswers.map((a) => a.status),
        (s) => s.length === 2,
        { what: "both receipts refused once" }
      )
      expect(first.receiptAnswers.map((a) => a.status)).toEqual([503, 503])
      const oldIds = first.sent.map((s) => Number(s.id))
      await first.dispose()
      expect(first.receiptsOwed).toBe(2)

      const second = await start()
      try {
        expect(second.receiptsOwed).toBe(2)
        expect(second.correlatorsKnown).toBe(3)
        const receipts = await eventually(
          async () => receiver.posted.filter((p) => p.status === 200),
          (p) => p.length >= 2,
          { what: "the owed receipts" }
        )
        expect(
          receipts
            .map((p) => p.body.deliveryInfoNotification)
            .sort((a, b) => a.callbackData.localeCompare(b.callbackData))
        ).toEqual([
          {
            deliveryInfo: { address: "tel:+261340000001", deliveryStatus: "DeliveredToTerminal" },
            callbackData: "delivered"
          },
          {
            deliveryInfo: { address: "tel:+261340000002", deliveryStatus: "DeliveryImpossible" },
            callbackData: "impossible"
          }
        ])
        await eventually(
          async () => second.receiptsOwed,
          (n) => n === 0,
          { what: "the receipts acknowledged" }
        )
        expect(second.receiptAnswers.map((a) => a.id).sort()).toEqual(oldIds.slice(0, 2).map(String).sort())

        const again = (to: string, correlator: string, bearer = token) =>
          sendSms(second.baseUrl, bearer, { to, correlator, notifyUrl: notifyURL })
        expect((await again("+261340000001", "delivered", expired)).status).toBe(401)
        const replays = [
          await again("+261340000001", "delivered"),
          await again("+261340000002", "impossible"),
          await again("+261340000006", "silent")
        ]
        expect(replays.map((a) => [a.status, a.json.requestError.serviceException.messageId])).toEqual(
          Array(3).fill([409, "SVC0005"])
        )
        const unreachable = await again("+261340000008", "unreachable")
        expect([unreachable.status, unreachable.json.requestError.serviceException.messageId]).toEqual([400, "SVC0001"])
        expect((await again("+261340000006", "fresh")).status).toBe(201)
        expect(second.sent.map((s) => s.correlator)).toEqual(["fresh"])
        expect(Number(second.sent[0]!.id)).toBeGreaterThan(Math.max(...oldIds))
      } finally {
        await second.dispose()
      }

      // a line cut short by a kill is skipped
      appendFileSync(join(dataDir, "journal.jsonl"), '{"kind":"tak')
      const third = await start()
      try {
        expect(third.receiptsOwed).toBe(0)
        expect(third.correlatorsKnown).toBe(4)
        const fresh = await sendSms(third.baseUrl, token, { to: "+261340000006", correlator: "fresh" })
        expect(fresh.status).toBe(409)
      } finally {
        await third.dispose()
      }
    } finally {
      await receiver.close()
    }
  })
})
