/**
 * The in-process simulator's table (docs/decisions.md#the-provider-simulator) across real service processes on one PostgreSQL
 * database (`node src/main.ts`, each its own database created next to DATABASE_URL's and
 * dropped): what the simulated provider received and owes lives in the database, so
 *
 * (a) a process killed with `kill -9` right after its sends (receipts still owed, 04 not yet
 *     verified) and a new process started on the same database: every message reaches its
 *     contract status, by the new process;
 * (b) two processes at once, 20 sends to +261340000004 through one (whose scheduler, hence
 *     verifier, is off), verified by the other: all 20 end delivered (before the simulator kept
 *     its state in the database, 5 of 20 ended failed: the verifier "never received" them).
 *
 * Without DATABASE_URL they are skipped, and the skipped block's name says why.
 */
import { afterAll, describe, expect, it } from "vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { eventually } from "../support/Eventually.ts"
import { bodyOf, type Creation, messagesPath } from "../support/Messages.ts"
import { createScratchDatabase } from "../support/ScratchDatabase.ts"
import { killAll, serve, type Served } from "../support/ServedProcess.ts"

const databaseUrl = process.env.DATABASE_URL

const databases: Array<{ readonly drop: () => Promise<void> }> = []
afterAll(async () => {
  await killAll()
  for (const d of databases) await d.drop()
})

const database = async (label: string) => {
  const scratch = await createScratchDatabase(label)
  databases.push(scratch)
  return scratch.url
}

/** POSTs a creation under a fresh key; the answer and the message id. */
const send = async (through: Served, apiKey: string, c: Creation) => {
  const reply = await through.call("POST", messagesPath, {
    token: apiKey,
    body: bodyOf(c),
    headers: { "idempotency-key": crypto.randomUUID() }
  })
  const id: string = reply.body?.id ?? reply.body?.message_id
  expect(id, reply.text).toBeDefined()
  return { id, status: reply.status, code: reply.body?.error?.code as string | undefined }
}

/** A message as the operator API shows it: its status and its timeline (`from>to@source`, and when). */
const messageOf = async (through: Served, orgId: string, id: string) => {
  const reply = await through.admin("GET", `/organizations/${orgId}/messages/${id}`)
  expect(reply.status, reply.text).toBe(200)
  const timeline = reply.body.timeline as ReadonlyArray<{
    from_status: string | null
    to_status: string
    source: string
    at: string
  }>
  return {
    status: reply.body.status as string,
    transitions: timeline.map((t) => `${t.from_status ?? "-"}>${t.to_status}@${t.source}`),
    at: timeline.map((t) => Date.parse(t.at))
  }
}

const balanceOf = async (through: Served, orgId: string) =>
  (await through.admin("GET", `/organizations/${orgId}`)).body.balance

describe.skipIf(!databaseUrl)("needs PostgreSQL (set DATABASE_URL; several service processes on one database)", () => {
  it("(a) kill -9 right after the sends, a new process on the same database: every number reaches its contract status", async () => {
    const env = {
      DATABASE_URL: await database("kill9"),
      // receipts owed well after the kill; 04 verified only after it
      SMS_SIMULATOR_RECEIPT_DELAY_MS: "4000",
      SMS_SIMULATOR_SLOW_MS: "200",
      SMS_VERIFY_INTERVAL_MS: "3000"
    }
    const first = await serve(env)
    const { orgId, apiKey } = await first.newOrg({ credits: 20 })
    const numbers = Object.values(testNumbers)
    const sent = await Promise.all(numbers.map((to) => send(first, apiKey, { to, text: `before the kill to ${to}` })))
    const scheduled = await send(first, apiKey, {
      to: testNumbers.delivered,
      text: "due after the kill",
      sendAt: Date.now() + 3000
    })
    first.started.child.kill("SIGKILL")
    expect(await first.started.exited).toBeNull()
    const killedAt = Date.now()
    expect(sent.map((s) => [s.status, s.code])).toEqual([
      [201, undefined],
      [201, undefined],
      [502, "provider_rejected"],
      [502, "provider_result_unknown"],
      [503, "dispatch_unavailable"],
      [201, undefined],
      [201, undefined],
      [502, "provider_result_unknown"],
      [502, "provider_result_unknown"]
    ])
    expect(scheduled.status).toBe(202)

    const second = await serve(env)
    const expected: Record<string, string> = {
      [testNumbers.delivered]: "delivered",
      [testNumbers.undeliverable]: "undeliverable",
      [testNumbers.rejected]: "failed",
      [testNumbers.unknownThenAccepted]: "delivered",
      [testNumbers.unreachable]: "failed",
      [testNumbers.acceptedNoReceipt]: "accepted",
      [testNumbers.slow]: "delivered",
      [testNumbers.unknownNeverReceived]: "failed",
      [testNumbers.unknownForGood]: "unknown"
    }
    const read = () => Promise.all([...sent, scheduled].map((s) => messageOf(second, orgId, s.id)))
    const settledAfter = await eventually(
      read,
      (ms) => ms.every((m, i) => m.status === (i < numbers.length ? expected[numbers[i]!] : "delivered")),
      {
        timeoutMs: 30_000,
        what: "every message in its contract status"
      }
    )
    const [delivered, undeliverable, , verified, , , slow, neverReceived, forGood] = settledAfter
    // receipts owed at the kill were sent by the new process, after it
    for (const m of [delivered!, undeliverable!, slow!]) {
      expect(m.transitions.slice(1)).toEqual(["processing>accepted@provider", `accepted>${m.status}@receipt`])
      expect(m.at.at(-1)!).toBeGreaterThan(killedAt)
    }
    expect(verified!.transitions).toEqual([
      "->processing@admission",
      "processing>unknown@provider",
      "unknown>accepted@verification",
      "accepted>delivered@receipt"
    ])
    expect(verified!.at[2]!).toBeGreaterThan(killedAt)
    expect(neverReceived!.transitions.at(-1)).toBe("unknown>failed@verification")
    expect(forGood!.transitions).toEqual(["->processing@admission", "processing>unknown@provider"])
    expect(settledAfter.at(-1)!.transitions).toEqual([
      "->scheduled@admission",
      "scheduled>processing@dispatch",
      "processing>accepted@provider",
      "accepted>delivered@receipt"
    ])
    // consumed: 01 02 04 06 07 and the scheduled one; 09 still reserved; the rest released
    expect(await balanceOf(second, orgId)).toEqual({ total: 14, reserved: 1, available: 13, valid_until: null })
  })

  it("(b) two processes at once: 20 sends to +261340000004 through one, verified by the other, all delivered", async () => {
    const url = await database("two")
    const common = { DATABASE_URL: url, SMS_SIMULATOR_RECEIPT_DELAY_MS: "200", SMS_VERIFY_INTERVAL_MS: "300" }
    // the sender runs no scheduler, so no verifier: only the other process can verify
    const sender = await serve({ ...common, SMS_SCHEDULER_ENABLED: "false" })
    const verifier = await serve({ ...common, SMS_SCHEDULER_ENABLED: "true" })
    const { orgId, apiKey } = await sender.newOrg({ credits: 20 })
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(sender, apiKey, { to: testNumbers.unknownThenAccepted, text: `four ${i}` })
      )
    )
    expect(sent.map((s) => [s.status, s.code])).toEqual(sent.map(() => [502, "provider_result_unknown"]))

    const final = await eventually(
      () => Promise.all(sent.map((s) => messageOf(verifier, orgId, s.id))),
      (ms) => ms.every((m) => m.status === "delivered"),
      {
        timeoutMs: 30_000,
        what: "all 20 delivered"
      }
    )
    for (const m of final) {
      expect(m.transitions).toEqual([
        "->processing@admission",
        "processing>unknown@provider",
        "unknown>accepted@verification",
        "accepted>delivered@receipt"
      ])
    }
    expect(await balanceOf(sender, orgId)).toEqual({ total: 0, reserved: 0, available: 0, valid_until: null })
  })
})
