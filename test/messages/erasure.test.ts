/**
 * Erasure of a message's personal data (docs/operators.md#operator-api-and-cli) as it is stored, not only as it is answered:
 * once a delivered message is erased, no row kept for the message or for its idempotency key
 * holds its recipient, its sender name or its text (the stored 201 answer held all three), and
 * its key replays 410; what only the work on a message in flight reads is cleared, and its ledger
 * entries are folded into its lot's totals. On the service's test clock, so the delivery receipt
 * comes when told.
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { expectError } from "../http/helpers.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const messagesPath = "/api/sms/v2/messages/"
const batchesPath = "/api/sms/v2/message-batches/"

/** Digits and letters that appear nowhere else in the database. */
const uniqueDigits = () => String(Math.floor(Math.random() * 1e8)).padStart(8, "0")
const uniqueLetters = (n: number) =>
  randomUUID()
    .replace(/[^a-f]/g, "")
    .padEnd(n, "x")
    .slice(0, n)
    .toUpperCase()

/** Every stored row about the message (any table with a message_id column, and the message itself) or the key, as JSON text. */
const storedRows = (orgId: string, messageId: string, key: string) =>
  Effect.gen(function* () {
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
    return [
      ...rows,
      ...message.map(({ row }) => ({ table: "messages", row })),
      ...keys.map(({ row }) => ({ table: "idempotency_keys", row }))
    ]
  })

withApp({ label: "erasure", config: { clock: "test" } })(`erasure of what is stored (${backend})`, (it) => {
  it.effect(
    "after erasure of a delivered message, no row of the message or its key holds the number, the sender or the text",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const sender = `E${uniqueLetters(9)}`
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5, sender })
        const to = `+2613${uniqueDigits()}`
        const text = `erase me ${randomUUID()}`
        const key = `erasure-${randomUUID()}`
        const post = () =>
          app.call("POST", messagesPath, { token: apiKey, body: { to, text }, headers: { "idempotency-key": key } })

        const first = yield* post()
        expect(first.status, first.text).toBe(201)
        expect(first.body).toMatchObject({ to, sender_name: sender, status: "accepted" })
        const id: string = first.body.id
        yield* app.advance(app.config.simulatorReceiptDelayMs + 1_000)
        const delivered = yield* app.call("GET", `${messagesPath}${id}/`, { token: apiKey })
        expect(delivered.body.status).toBe("delivered")

        // precondition: before erasure the stored rows do hold them (else the check below proves nothing)
        const before = (yield* storedRows(orgId, id, key)).map((r) => r.row).join("\n")
        for (const secret of [to, sender, text]) expect(before, secret).toContain(secret)
        expect(
          (yield* storedRows(orgId, id, key)).some((r) => r.table === "idempotency_keys" && r.row.includes(to))
        ).toBe(true)

        const erased = yield* app.admin("POST", `/organizations/${orgId}/messages/${id}/erasure`)
        expect(erased.status, erased.text).toBe(200)

        const after = yield* storedRows(orgId, id, key)
        expect(after.map((r) => r.table)).toContain("idempotency_keys")
        expect(after.map((r) => r.table)).toContain("messages")
        for (const { table, row } of after) {
          for (const secret of [to, sender, text]) expect(row, `${table} still holds ${secret}`).not.toContain(secret)
        }
        const replay = yield* post()
        expectError(replay, 410, "personal_data_erased")
        for (const secret of [to, sender, text]) expect(replay.text).not.toContain(secret)
      })
  )

  it.effect(
    "an erased message keeps what it shows: its provider id and in-flight times are cleared, its ledger entries folded into its lot's totals",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const sql = yield* SqlClient.SqlClient
        const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
        const sendAt = new Date((yield* app.now) + 60_000).toISOString()
        const created = yield* app.call("POST", messagesPath, {
          token: apiKey,
          body: { to: "+261340000001", text: "scheduled, then erased", send_at: sendAt },
          headers: { "idempotency-key": randomUUID() }
        })
        expect(created.status, created.text).toBe(202)
        const id: string = created.body.id
        yield* app.advance(60_000 + app.config.simulatorReceiptDelayMs + 1_000)
        const row = () =>
          sql<{
            providerRef: string | null
            submittedAt: Date | null
            dueAt: Date | null
            verifyAt: Date | null
            entries: number
            totals: number
          }>`SELECT
            m.provider_message_id AS provider_ref, m.submitted_at, m.due_at, m.verify_at,
            (SELECT count(*) FROM credit_entries e WHERE e.organisation_id = m.organisation_id AND e.message_id = m.id)::integer AS entries,
            (SELECT coalesce(sum(t.amount), 0) FROM credit_entry_totals t WHERE t.organisation_id = m.organisation_id)::integer AS totals
          FROM messages m WHERE m.organisation_id = ${orgId} AND m.id = ${id}`.pipe(Effect.map((rows) => rows[0]!))
        const before = yield* row()
        expect(before.providerRef).not.toBeNull()
        expect([before.submittedAt, before.dueAt].map((t) => t === null)).toEqual([false, false])
        // its reservation and consumption
        expect(before.entries).toBe(2)
        const shown = (yield* app.call("GET", `${messagesPath}${id}/`, { token: apiKey })).body
        const balance = (yield* app.call("GET", "/api/sms/v2/balance/", { token: apiKey })).body

        expect((yield* app.admin("POST", `/organizations/${orgId}/messages/${id}/erasure`)).status).toBe(200)
        expect(yield* row()).toEqual({
          providerRef: null,
          submittedAt: null,
          dueAt: null,
          verifyAt: null,
          entries: 0,
          totals: 2
        })
        expect((yield* app.call("GET", `${messagesPath}${id}/`, { token: apiKey })).body).toEqual({
          ...shown,
          to: "",
          sender_name: ""
        })
        expect((yield* app.call("GET", "/api/sms/v2/balance/", { token: apiKey })).body).toEqual(balance)
      })
  )

  it.effect("a batch's text is stored once, not in its members' rows, and goes with the last member erased", () =>
    Effect.gen(function* () {
      const app = yield* App
      const sql = yield* SqlClient.SqlClient
      const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
      const text = `batch text ${randomUUID()}`
      const created = yield* app.call("POST", batchesPath, {
        token: apiKey,
        body: {
          recipients: ["+261340000001", "+261330000001"],
          text,
          send_at: new Date((yield* app.now) + 60_000).toISOString()
        },
        headers: { "idempotency-key": randomUUID() }
      })
      expect(created.status, created.text).toBe(202)
      const batchId: string = created.body.id
      yield* app.advance(60_000 + app.config.simulatorReceiptDelayMs + 1_000)
      const members = (yield* app.call("GET", `${batchesPath}${batchId}/messages/`, { token: apiKey })).body
        .results as Array<{ id: string; status: string }>
      expect(members.map((m) => m.status)).toEqual(["delivered", "delivered"])
      const stored = () =>
        sql<{ own: number; shared: number }>`SELECT
            (SELECT count(*) FROM messages WHERE organisation_id = ${orgId} AND batch_id = ${batchId} AND text IS NOT NULL)::integer AS own,
            (SELECT count(*) FROM message_texts WHERE organisation_id = ${orgId} AND batch_id = ${batchId} AND text = ${text})::integer AS shared`.pipe(
          Effect.map((rows) => rows[0]!)
        )
      // sent with the batch's text (the simulator took both), held once
      expect(yield* stored()).toEqual({ own: 0, shared: 1 })

      const erase = (id: string) => app.admin("POST", `/organizations/${orgId}/messages/${id}/erasure`)
      expect((yield* erase(members[0]!.id)).status).toBe(200)
      // the other member still needs it
      expect(yield* stored()).toEqual({ own: 1, shared: 1 })
      expect((yield* erase(members[1]!.id)).status).toBe(200)
      expect(yield* stored()).toEqual({ own: 2, shared: 0 })
      const blanked = yield* sql<{ n: number }>`SELECT count(*)::integer AS n FROM messages
        WHERE organisation_id = ${orgId} AND batch_id = ${batchId} AND text = '' AND to_number = ''`
      expect(blanked[0]!.n).toBe(2)
    })
  )
})
