/**
 * Retention (CONTRACT 12) and compaction under the service's test clock: a message final for longer than its
 * organisation's retention (its own, else SMS_RETENTION_DAYS) is erased as the operator's erasure
 * does, at once on the advance that passes the limit, and not before; its key replays 410 and no
 * credit moves. Each test advances the shared clock: it only judges its own organisations.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { simulatorMemoryMs } from "../../src/dispatch/Compaction.ts"
import { expectError } from "../http/helpers.ts"
import { backend, makeTestApp } from "../support/TestApp.ts"

const defaultDays = 2
const app = makeTestApp({ label: "retention", config: { clock: "test", retentionDays: defaultDays } })
afterAll(() => app.dispose())

const dayMs = 86_400_000
const messagesPath = "/api/sms/v2/messages/"

/** An organisation with `retentionDays` of its own (undefined: the default), and a delivered message of it. */
const deliveredMessage = async (retentionDays?: number) => {
  const { orgId, apiKey } = await app.newOrg({ credits: 10, sender: "KEEP" })
  if (retentionDays !== undefined) {
    const set = await app.admin("PATCH", `/organizations/${orgId}`, { retention_days: retentionDays })
    expect(set.status, set.text).toBe(200)
  }
  const body = { to: "+261340000001", text: `kept a while ${randomUUID()}` }
  const key = `retention-${randomUUID()}`
  const post = () => app.call("POST", messagesPath, { token: apiKey, body, headers: { "idempotency-key": key } })
  const created = await post()
  expect(created.status, created.text).toBe(201)
  await app.advance(app.config.simulatorReceiptDelayMs + 1_000)
  const id: string = created.body.id
  const read = async () => (await app.call("GET", `${messagesPath}${id}/`, { token: apiKey })).body
  const balance = async () => (await app.call("GET", "/api/sms/v2/balance/", { token: apiKey })).body
  expect((await read()).status).toBe("delivered")
  return { orgId, apiKey, id, body, post, read, balance }
}

describe(`retention (${backend})`, () => {
  it("erases a message once final for longer than the default, not before: blank, 410 on replay, the balance unchanged", async () => {
    const m = await deliveredMessage()
    const before = await m.read()
    const balance = await m.balance()

    await app.advance(defaultDays * dayMs - 60_000)
    expect(await m.read()).toEqual(before)
    expect((await m.post()).status).toBe(201)

    await app.advance(120_000)
    const after = await m.read()
    expect(after).toEqual({ ...before, to: "", sender_name: "" })
    expectError(await m.post(), 410, "personal_data_erased")
    expect(await m.balance()).toEqual(balance)
    // the operator sees it erased too, with its timeline as it was
    const seen = await app.admin("GET", `/organizations/${m.orgId}/messages/${m.id}`)
    expect(seen.body).toMatchObject({ to: "", sender_name: "", status: "delivered" })
  })

  it("an organisation's own retention overrides the default", async () => {
    const longer = await deliveredMessage(5)
    const shorter = await deliveredMessage(1)
    await app.advance(1 * dayMs + 60_000)
    expect((await shorter.read()).to).toBe("")
    expect((await longer.read()).to).toBe(longer.body.to)
    await app.advance(3 * dayMs)
    expect((await longer.read()).to).toBe(longer.body.to)
    await app.advance(1 * dayMs)
    expect((await longer.read()).to).toBe("")
    expectError(await longer.post(), 410, "personal_data_erased")
  })

  it("retention_days null goes back to the default", async () => {
    const m = await deliveredMessage(30)
    const reset = await app.admin("PATCH", `/organizations/${m.orgId}`, { retention_days: null })
    expect(reset.body.retention_days).toBeNull()
    await app.advance(defaultDays * dayMs + 60_000)
    expect((await m.read()).to).toBe("")
  })

  it("a message not final is never erased, however old", async () => {
    const { apiKey } = await app.newOrg({ credits: 10 })
    const sendAt = new Date((await app.now()) + 10 * dayMs).toISOString()
    const created = await app.call("POST", messagesPath, {
      token: apiKey,
      body: { to: "+261340000002", text: "later", send_at: sendAt },
      headers: { "idempotency-key": randomUUID() }
    })
    expect(created.status, created.text).toBe(202)
    await app.moveClock(5 * dayMs)
    await app.advance(1_000)
    const read = await app.call("GET", `${messagesPath}${created.body.id}/`, { token: apiKey })
    expect(read.body).toMatchObject({ status: "scheduled", to: "+261340000002" })
  })
})

/** Rows kept for the message outside its own row and timeline: its receipts, the simulator's memory of it. */
const sideRows = (orgId: string, id: string) =>
  app.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ receipts: number; simulator: number }>`SELECT
        (SELECT count(*) FROM provider_receipts r JOIN messages m ON r.provider_ref = m.provider_message_id
          WHERE m.organisation_id = ${orgId} AND m.id = ${id})::integer AS receipts,
        (SELECT count(*) FROM simulator_messages WHERE organisation_id = ${orgId} AND message_id = ${id})::integer AS simulator`
    return row!
  }))

describe(`compaction of finished messages (${backend})`, () => {
  it("a day after a message finished its applied receipt is gone, the simulator's row once no verification can ask; its answer and timeline are the same", async () => {
    const m = await deliveredMessage(60)
    const timeline = async () => (await app.admin("GET", `/organizations/${m.orgId}/messages/${m.id}`)).body
    const [message, seen] = [await m.read(), await timeline()]
    expect(seen.timeline.length).toBeGreaterThanOrEqual(3)
    expect(await sideRows(m.orgId, m.id)).toEqual({ receipts: 1, simulator: 1 })
    await app.advance(dayMs - 60_000)
    expect(await sideRows(m.orgId, m.id)).toEqual({ receipts: 1, simulator: 1 })
    await app.advance(120_000)
    // a message left unknown is asked about for 30 days: the simulator still remembers it took it
    expect(await sideRows(m.orgId, m.id)).toEqual({ receipts: 0, simulator: 1 })
    await app.advance(simulatorMemoryMs - dayMs)
    expect(await sideRows(m.orgId, m.id)).toEqual({ receipts: 0, simulator: 0 })
    expect(await m.read()).toEqual(message)
    expect(await timeline()).toEqual(seen)
  })
})
