/**
 * Erasure of a message's personal data (CONTRACT 2) as it is stored, not only as it is answered:
 * once a delivered message is erased, no row kept for the message or for its idempotency key
 * holds its recipient, its sender name or its text (the stored 201 answer held all three), and
 * its key replays 410. On the service's test clock, so the delivery receipt comes when told.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { expectError } from "../http/helpers.ts"
import { backend, makeTestApp } from "../support/TestApp.ts"

const app = makeTestApp({ label: "erasure", config: { clock: "test" } })
afterAll(() => app.dispose())

const messagesPath = "/api/sms/v2/messages/"

/** Digits and letters that appear nowhere else in the database. */
const uniqueDigits = () => String(Math.floor(Math.random() * 1e8)).padStart(8, "0")
const uniqueLetters = (n: number) => randomUUID().replace(/[^a-f]/g, "").padEnd(n, "x").slice(0, n).toUpperCase()

/** Every stored row about the message (any table with a message_id column, and the message itself) or the key, as JSON text. */
const storedRows = (orgId: string, messageId: string, key: string) =>
  app.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* sql<{ table: string }>`SELECT table_name AS table FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'message_id' ORDER BY table_name`
    const rows: Array<{ table: string; row: string }> = []
    for (const { table } of tables) {
      const found = yield* sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql(table)} t
        WHERE t.message_id = ${messageId}::uuid`
      rows.push(...found.map(({ row }) => ({ table, row })))
    }
    const message = yield* sql<{ row: string }>`SELECT row_to_json(m)::text AS row FROM messages m
      WHERE m.organisation_id = ${orgId} AND m.id = ${messageId}`
    const keys = yield* sql<{ row: string }>`SELECT row_to_json(k)::text AS row FROM idempotency_keys k
      WHERE k.organisation_id = ${orgId} AND k.key = ${key}`
    return [...rows, ...message.map(({ row }) => ({ table: "messages", row })), ...keys.map(({ row }) => ({ table: "idempotency_keys", row }))]
  }))

describe(`erasure of what is stored (${backend})`, () => {
  it("after erasure of a delivered message, no row of the message or its key holds the number, the sender or the text", async () => {
    const sender = `E${uniqueLetters(9)}`
    const { orgId, apiKey } = await app.newOrg({ credits: 5, sender })
    const to = `+2613${uniqueDigits()}`
    const text = `erase me ${randomUUID()}`
    const key = `erasure-${randomUUID()}`
    const post = () => app.call("POST", messagesPath, { token: apiKey, body: { to, text }, headers: { "idempotency-key": key } })

    const first = await post()
    expect(first.status, first.text).toBe(201)
    expect(first.body).toMatchObject({ to, sender_name: sender, status: "accepted" })
    const id: string = first.body.id
    await app.advance(app.config.simulatorReceiptDelayMs + 1_000)
    const delivered = await app.call("GET", `${messagesPath}${id}/`, { token: apiKey })
    expect(delivered.body.status).toBe("delivered")

    // precondition: before erasure the stored rows do hold them (else the check below proves nothing)
    const before = (await storedRows(orgId, id, key)).map((r) => r.row).join("\n")
    for (const secret of [to, sender, text]) expect(before, secret).toContain(secret)
    expect((await storedRows(orgId, id, key)).some((r) => r.table === "idempotency_keys" && r.row.includes(to))).toBe(true)

    const erased = await app.admin("POST", `/organizations/${orgId}/messages/${id}/erasure`)
    expect(erased.status, erased.text).toBe(200)

    const after = await storedRows(orgId, id, key)
    expect(after.map((r) => r.table)).toContain("idempotency_keys")
    expect(after.map((r) => r.table)).toContain("messages")
    for (const { table, row } of after) {
      for (const secret of [to, sender, text]) expect(row, `${table} still holds ${secret}`).not.toContain(secret)
    }
    const replay = await post()
    expectError(replay, 410, "personal_data_erased")
    for (const secret of [to, sender, text]) expect(replay.text).not.toContain(secret)
  })
})
