/**
 * The simulator console in a real browser: Debian's Chromium driven by playwright-core against
 * the service as `npm start` assembles it (src/app/AppLayer.ts `mainLayer`) on a loopback port, on its test clock.
 * A message goes to each simulator number through the public API; in the page, each is seen
 * with its first answer, then the page's "advance" control moves the clock and each is seen to
 * reach its status of docs/decisions.md#the-provider-simulator; a receipt is sent from the page and seen applied.
 * The inbound view (docs/two-way.md): a message to the number that answers STOP, the page's
 * advance bringing the STOP into the organisation's inbound messages and the number into its
 * opt-out list; inbound messages to a number nobody holds, one sent from the page's form and one
 * through the operator API (seen by the view's own refresh), in the unrouted list.
 * Everything waits on conditions of the page, bounded; nothing sleeps.
 *
 * Skipped, saying why, when no Chromium is installed (`apt-get install -y chromium`, or set
 * CHROMIUM_PATH); under CI (CI=true), which installs it, a missing Chromium fails instead. Leaves
 * screenshots in test-output/console.png and test-output/console-inbound.png.
 */
import { existsSync, mkdirSync } from "node:fs"
import { createServer } from "node:net"
import { join, resolve } from "node:path"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { replyingNumbers } from "../../src/provider/inprocess/ReplyingNumbers.ts"
import { mainLayer } from "../../src/app/AppLayer.ts"
import { scratchDatabaseUrl } from "../support/ScratchDatabase.ts"
import { adminToken, allPermissions, testConfig } from "../support/TestApp.ts"
import { type Receiver, startReceiver } from "../webhooks/support.ts"

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const haveChromium = existsSync(chromiumPath)
// CI installs Chromium (.ci/run): there, a missing browser is a broken install step, not a reason to skip
if (!haveChromium && process.env.CI === "true") {
  throw new Error(`no Chromium at ${chromiumPath}: .ci/run installs Debian's (apt-get install -y chromium)`)
}
if (!haveChromium) {
  console.warn(
    `SKIPPED the console browser test: no Chromium at ${chromiumPath}. ` +
      "Install Debian's (apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium executable."
  )
}

const screenshotPath = resolve(import.meta.dirname, "../../test-output/console.png")
const inboundScreenshotPath = resolve(import.meta.dirname, "../../test-output/console-inbound.png")
/** The simulator's number that answers STOP one receipt delay after its delivery receipt (docs/two-way.md). */
const stopper = "+261340000011"
/** Longest any one condition of the page is waited for. */
const waitMs = 30_000

/** A loopback port nothing listens on right now. */
const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })

/** The whole service on a free port, test clock, its own database; `stop` closes it. */
const startService = async () => {
  const port = await freePort()
  const scope = Effect.runSync(Scope.make())
  const url = await Effect.runPromise(scratchDatabaseUrl("console").pipe(Effect.provideService(Scope.Scope, scope)))
  const config = testConfig({
    port,
    clock: "test",
    simulatorSlowMs: 100,
    ...(url === undefined ? {} : { databaseUrl: Redacted.make(url) })
  })
  await Effect.runPromise(Layer.buildWithScope(mainLayer(config), scope))
  return { base: `http://127.0.0.1:${port}`, stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

interface Answer {
  readonly status: number
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies, asserted field by field
  readonly body: any
}

/** Each simulator number, the first answer of its send and the status it ends in (docs/decisions.md#the-provider-simulator). */
const outcomes = [
  [testNumbers.delivered, 201, "accepted", "delivered"],
  [testNumbers.undeliverable, 201, "accepted", "undeliverable"],
  [testNumbers.rejected, 502, "failed", "failed"],
  [testNumbers.unknownThenAccepted, 502, "unknown", "delivered"],
  [testNumbers.unreachable, 503, "failed", "failed"],
  [testNumbers.acceptedNoReceipt, 201, "accepted", "accepted"],
  [testNumbers.slow, 201, "accepted", "delivered"],
  [testNumbers.unknownNeverReceived, 502, "unknown", "failed"],
  [testNumbers.unknownForGood, 502, "unknown", "unknown"]
] as const

describe.skipIf(!haveChromium)("the simulator console in Chromium", () => {
  let service: Awaited<ReturnType<typeof startService>>
  let browser: Browser
  let page: Page
  let receiver: Receiver
  const pageErrors: Array<string> = []

  const call = async (
    method: string,
    path: string,
    token: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ) => {
    const res = await fetch(`${service.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    // a 202 or 204 has no body
    const text = await res.text()
    const answer: Answer = { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    return answer
  }
  const admin = (method: string, path: string, body?: unknown) => call(method, `/admin/v1${path}`, adminToken, body)

  beforeAll(async () => {
    service = await startService()
    receiver = await startReceiver()
    browser = await chromium.launch({
      executablePath: chromiumPath,
      // this machine's closed network: no background connections, no first-run work
      args: [
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
    page = await newPage(pageErrors)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await service?.stop()
    await receiver?.close()
  })

  /** A page of its own (its own sessionStorage), whose errors are kept in `errors`. */
  const newPage = async (errors: Array<string>) => {
    const opened = await browser.newPage({ viewport: { width: 1440, height: 900 } })
    opened.setDefaultTimeout(waitMs)
    opened.on("console", (m) => void (m.type() === "error" && errors.push(m.text())))
    opened.on("pageerror", (e) => void errors.push(e.message))
    return opened
  }

  /**
   * Waits for the page to show the clock at `iso`; when it does not, fails saying what the page
   * and the service show instead (an advance still running, past its target, or refused).
   */
  const clockShown = async (iso: string, on: Page = page) => {
    try {
      await on.locator(`#clock-now[data-now="${iso}"]`).waitFor()
    } catch (e) {
      const shown = await on.locator("#clock-now").getAttribute("data-now")
      const service = (await admin("GET", "/clock")).body.now
      const button = await on.locator("#advance").textContent()
      const alerts = await on.getByRole("alert").allTextContents()
      throw new Error(
        `the page never showed the clock at ${iso}: it shows ${shown}, the service's is ${service}, ` +
          `the button says ${JSON.stringify(button)}, alerts: ${JSON.stringify(alerts)}`,
        { cause: e }
      )
    }
  }

  /** The row of a message in the page's table, once it shows `status`. */
  const rowWithStatus = (id: string, status: string) =>
    page.locator(`tr[data-message-id="${id}"][data-status="${status}"]`)

  it("shows every simulator number reach its contract status as the page advances the clock, and sends a receipt", async () => {
    const org = await admin("POST", "/organizations", { name: "Console test", default_sender_name: "SHOP" })
    expect(org.status).toBe(201)
    const orgId: string = org.body.id
    expect((await admin("POST", `/organizations/${orgId}/credits`, { amount: 100 })).status).toBe(201)
    const key = await admin("POST", `/organizations/${orgId}/api-keys`, { permissions: allPermissions })
    const apiKey: string = key.body.api_key
    // a webhook endpoint whose deliveries the page shows
    const hooksKey = await admin("POST", `/organizations/${orgId}/api-keys`, { permissions: ["webhooks.manage"] })
    const endpoint = await call(
      "POST",
      "/api/sms/v2/webhooks/",
      hooksKey.body.api_key,
      { url: receiver.url, events: ["message.delivered"] },
      { "idempotency-key": "console-webhook" }
    )
    expect(endpoint.status).toBe(201)

    // a wrong token is refused; the right one opens the console and stays out of the URL
    await page.goto(`${service.base}/console`)
    await page.locator("#token").fill("not-the-operator-token")
    await page.locator("form button[type=submit]").click()
    await page.getByRole("alert").filter({ hasText: "refused" }).waitFor()
    await page.locator("#token").fill(adminToken)
    await page.locator("form button[type=submit]").click()
    await page.locator("#clock-now").waitFor()
    expect(await page.locator(".clock .mode").textContent()).toBe("test clock")
    expect(page.url()).toBe(`${service.base}/console`)
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([adminToken])

    // one message to each simulator number, and a batch, through the public API
    const ids: Array<string> = []
    for (const [to, status] of outcomes) {
      const sent = await call(
        "POST",
        "/api/sms/v2/messages/",
        apiKey,
        { to, text: `To ${to}` },
        { "idempotency-key": `console-${to}` }
      )
      expect({ to, status: sent.status }).toEqual({ to, status })
      ids.push(sent.body.id ?? sent.body.message_id)
    }
    const clockBefore = Date.parse((await admin("GET", "/clock")).body.now)
    const batch = await call(
      "POST",
      "/api/sms/v2/message-batches/",
      apiKey,
      {
        recipients: [testNumbers.delivered, testNumbers.undeliverable, testNumbers.rejected],
        text: "Batch",
        send_at: new Date(clockBefore + 20_000).toISOString()
      },
      { "idempotency-key": "console-batch" }
    )
    expect(batch.status).toBe(202)

    await page.locator(`[data-org-id="${orgId}"]`).click()
    for (const [i, [, , first]] of outcomes.entries()) await rowWithStatus(ids[i]!, first).waitFor()
    await page
      .locator(`tr[data-batch-id="${batch.body.id}"] [data-count="scheduled"]`)
      .filter({ hasText: "scheduled 3" })
      .waitFor()

    // the page's own control moves the clock (which stands still otherwise): once the work due
    // by then is done, the page shows the new time
    await page.locator("#advance-seconds").fill("30")
    // the page reads the clock again meanwhile (and draws the bar again): what was typed stays
    await page.waitForResponse((r) => r.url().endsWith("/admin/v1/clock") && r.request().method() === "GET")
    expect(await page.locator("#advance-seconds").inputValue()).toBe("30")
    await page.locator("#advance").click()
    await clockShown(new Date(clockBefore + 30_000).toISOString())
    for (const [i, [to, , , final]] of outcomes.entries()) {
      const row = rowWithStatus(ids[i]!, final)
      await row.waitFor()
      expect({ to, shown: await row.locator(".status").textContent() }).toEqual({ to, shown: final })
    }
    for (const [status, count] of [
      ["delivered", 1],
      ["undeliverable", 1],
      ["failed", 1]
    ] as const) {
      await page
        .locator(`tr[data-batch-id="${batch.body.id}"] [data-count="${status}"]`)
        .filter({ hasText: `${status} ${count}` })
        .waitFor()
    }
    // consumed: 01 02 04 06 07 and the batch's two; released: 03 05 08 and the batch's 03; reserved: 09
    await page.locator('[data-balance="available"]').filter({ hasText: /^92$/ }).waitFor()

    // the timeline of the message that went through verification
    await page.locator(`tr[data-message-id="${ids[3]}"]`).click()
    await page.locator('#timeline li[data-to-status="delivered"]').waitFor()
    expect(
      await page.locator("#timeline li").evaluateAll((items) => items.map((li) => li.getAttribute("data-to-status")))
    ).toEqual(["processing", "unknown", "accepted", "delivered"])
    expect(await page.locator("#timeline li").last().textContent()).toContain("by receipt")
    mkdirSync(join(screenshotPath, ".."), { recursive: true })
    await page.screenshot({ path: screenshotPath, fullPage: true })

    // 06 is accepted and would never get a receipt: the page makes the simulator send one
    const accepted = ids[5]!
    expect(await page.locator("tr[data-status=accepted] button[data-receipt]").count()).toBe(2)
    await rowWithStatus(accepted, "accepted").locator('button[data-receipt="delivered"]').click()
    await rowWithStatus(accepted, "delivered").waitFor()
    await page.locator('#timeline li[data-to-status="delivered"]').filter({ hasText: "by receipt" }).waitFor()
    expect(await page.locator("button[data-receipt]").count()).toBe(0)
    expect((await call("GET", `/api/sms/v2/messages/${accepted}/`, apiKey)).body.status).toBe("delivered")

    // the endpoint's deliveries: one per message delivered, succeeded
    await page.locator(`[data-webhook-id="${endpoint.body.id}"] tr[data-state="succeeded"]`).first().waitFor()
    expect(receiver.received.length).toBeGreaterThan(0)

    // no script refused by the Content-Security-Policy, no error in the page
    expect(pageErrors.filter((e) => !e.includes("401"))).toEqual([])
  }, 180_000)

  it("shows the STOP of +261340000011 and its opt-out in the inbound view as the page advances the clock, and the unrouted inbound messages", async () => {
    expect(replyingNumbers[stopper]).toBe("STOP")
    const org = await admin("POST", "/organizations", { name: "Inbound console test", default_sender_name: "TSENA" })
    expect(org.status).toBe(201)
    const orgId: string = org.body.id
    expect((await admin("POST", `/organizations/${orgId}/credits`, { amount: 10 })).status).toBe(201)
    const key = await admin("POST", `/organizations/${orgId}/api-keys`, { permissions: allPermissions })
    const apiKey: string = key.body.api_key

    const errors: Array<string> = []
    const inbound = await newPage(errors)
    try {
      await inbound.goto(`${service.base}/console`)
      await inbound.locator("#token").fill(adminToken)
      await inbound.locator("form button[type=submit]").click()
      await inbound.locator(`[data-org-id="${orgId}"]`).click()
      await inbound.locator("#view-inbound").click()
      expect(await inbound.locator("#view-inbound").getAttribute("aria-selected")).toBe("true")
      await inbound
        .locator(".inbound-view h1")
        .filter({ hasText: /^Inbound console test$/ })
        .waitFor()
      // nothing received, nobody opted out yet
      await inbound.locator("#inbound-messages").filter({ hasText: "No inbound message yet." }).waitFor()
      await inbound.locator("#opt-outs").filter({ hasText: "No number is opted out." }).waitFor()

      const sent = await call(
        "POST",
        "/api/sms/v2/messages/",
        apiKey,
        { to: stopper, text: "Tongasoa" },
        { "idempotency-key": "console-inbound-stop" }
      )
      expect([sent.status, sent.body.status]).toEqual([201, "accepted"])
      const sentId: string = sent.body.id

      // the page's advance moves the clock past the receipt and the STOP one receipt delay after it
      const clockBefore = Date.parse((await admin("GET", "/clock")).body.now)
      await inbound.locator("#advance-seconds").fill("10")
      await inbound.locator("#advance").click()
      await clockShown(new Date(clockBefore + 10_000).toISOString(), inbound)
      const stop = inbound.locator(`#inbound-messages tr[data-from="${stopper}"][data-keyword="STOP"]`)
      await stop.waitFor()
      expect(await stop.locator('[data-field="text"]').textContent()).toBe("STOP")
      expect(await stop.getAttribute("data-in-reply-to")).toBe(sentId)
      expect(await stop.locator("td").nth(2).textContent()).toBe("TSENA")
      const optOut = inbound.locator(`#opt-outs tr[data-phone-number="${stopper}"]`)
      await optOut.waitFor()
      expect(await optOut.getAttribute("data-source")).toBe("sms")
      expect(await inbound.locator("#opt-outs tbody tr").count()).toBe(1)

      // the form shows the service's refusal in place: a sender that is no Malagasy mobile number
      await inbound.locator("#inbound-from").fill("nobody")
      await inbound.locator("#inbound-to").fill("7979")
      await inbound.locator("#inbound-text").fill("Tsy mandeha")
      await inbound.locator("#send-inbound").click()
      await inbound.locator("#simulator-inbound [role=alert]").filter({ hasText: "validation_error" }).waitFor()

      // an inbound message from the page's form to a number no organisation holds: unrouted
      const fromPage = "+261330077001"
      await inbound.locator("#inbound-from").fill(fromPage)
      await inbound.locator("#inbound-to").fill("7979")
      await inbound.locator("#inbound-text").fill("Salama avy amin'ny pejy")
      await inbound.locator("#send-inbound").click()
      await inbound.locator("#simulator-inbound [role=status]").filter({ hasText: "received" }).waitFor()
      const unroutedFromPage = inbound.locator(`#unrouted tr[data-from="${fromPage}"]`)
      await unroutedFromPage.waitFor()
      expect(await unroutedFromPage.locator('[data-field="text"]').textContent()).toBe("Salama avy amin'ny pejy")
      expect(await inbound.locator(`#inbound-messages tr[data-from="${fromPage}"]`).count()).toBe(0)
      expect(await inbound.locator("#simulator-inbound [role=alert]").count()).toBe(0)
      // the routed STOP is not among the unrouted
      expect(await inbound.locator(`#unrouted tr[data-from="${stopper}"]`).count()).toBe(0)

      // one through the operator API: the view's own refresh shows it, no action of the page needed
      const fromApi = "+261330077002"
      const mo = await admin("POST", "/simulator/inbound", { from: fromApi, to: "7979", text: "Avy amin'ny API" })
      expect(mo.status).toBe(202)
      const unroutedFromApi = inbound.locator(`#unrouted tr[data-from="${fromApi}"]`)
      await unroutedFromApi.waitFor()
      expect(await unroutedFromApi.locator('[data-field="text"]').textContent()).toBe("Avy amin'ny API")
      // newest first
      expect(
        await inbound
          .locator("#unrouted tbody tr")
          .evaluateAll((rows) => rows.slice(0, 2).map((r) => r.getAttribute("data-from")))
      ).toEqual([fromApi, fromPage])

      // what the page shows is what the service holds
      const listed = await admin("GET", `/organizations/${orgId}/opt-outs`)
      expect(listed.body.results.map((o: { phone_number: string }) => o.phone_number)).toEqual([stopper])
      const refused = await call(
        "POST",
        "/api/sms/v2/messages/",
        apiKey,
        { to: stopper, text: "Tongasoa indray" },
        { "idempotency-key": "console-inbound-after-stop" }
      )
      expect([refused.status, refused.body.error?.code]).toEqual([400, "validation_error"])

      mkdirSync(join(inboundScreenshotPath, ".."), { recursive: true })
      await inbound.screenshot({ path: inboundScreenshotPath, fullPage: true })
      // Chromium logs the refused send's answer (400) as an error: nothing else may be
      expect(errors.filter((e) => !e.includes("status of 400"))).toEqual([])
    } finally {
      await inbound.close()
    }
  }, 180_000)
})
