/**
 * The simulator's memory (`simulator_messages`): one row per message it was handed, refusals
 * included, with how many times it was handed it. A second submission of a message would be a
 * second SMS: the fault suite reads this count to show it never happens.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { Provider } from "../../src/provider/Provider.ts"
import { eventuallyEffect } from "../support/Eventually.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

/**
 * A message sent now to an ordinary number by a new organisation, and its simulator row: how long
 * after the receipt falls due the rounds may take it (null once sent).
 */
const sentWithRow = Effect.gen(function* () {
  const app = yield* App
  const sql = yield* SqlClient.SqlClient
  const { apiKey, orgId } = yield* app.newOrg({ credits: 2 })
  const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
    token: apiKey,
    headers: { "idempotency-key": crypto.randomUUID() },
    body: { to: "+261341234567", text: "Salama" }
  })
  expect(sent.status).toBe(201)
  const row = () =>
    sql<{
      owedAfterMs: number | null
    }>`SELECT (extract(epoch FROM o.due_at - s.receipt_at) * 1000)::float8 AS owed_after_ms
      FROM simulator_messages AS s LEFT JOIN simulator_receipts_owed AS o USING (organisation_id, message_id)
      WHERE s.organisation_id = ${orgId} AND s.message_id = ${sent.body.id}`
  return { apiKey, sent, row }
})

withApp({ label: "simulator_table", config: { clock: "test" } })(`the simulator's table (${backend})`, (it) => {
  it.effect("counts every submission of a message, a rejected one included; an unreachable one never reached it", () =>
    Effect.gen(function* () {
      const organisationId = crypto.randomUUID()
      const submission = (to: string) => ({
        organisationId,
        messageId: crypto.randomUUID(),
        to,
        senderName: "INFO",
        text: "hello",
        segments: 1
      })
      const [twice, rejected, unreachable] = [
        submission("+261341234567"),
        submission(testNumbers.rejected),
        submission(testNumbers.unreachable)
      ]
      const rows = yield* Effect.gen(function* () {
        const provider = yield* Provider
        const answers = [
          yield* provider.submit(twice),
          yield* provider.submit(twice),
          yield* provider.submit(rejected),
          yield* provider.submit(unreachable)
        ]
        expect(answers.map((a) => a._tag)).toEqual(["Accepted", "Accepted", "Rejected", "Unreachable"])
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{
          messageId: string
          submissions: number
          receipt: string
        }>`SELECT message_id::text, submissions, receipt
          FROM simulator_messages WHERE organisation_id = ${organisationId} ORDER BY submissions DESC`
      })
      expect(rows).toEqual([
        { messageId: twice.messageId, submissions: 2, receipt: "delivered" },
        { messageId: rejected.messageId, submissions: 1, receipt: "none" }
      ])
    })
  )

  it.effect(
    "under the test clock too, the process that took a message sends its receipt when an advance reaches it, before any round could",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey, sent, row } = yield* sentWithRow
        // held by this process: owed to the rounds only 5 s after the receipt falls due
        expect(yield* row()).toEqual([{ owedAfterMs: 5_000 }])
        // the receipt's time reached, well before a round would take the row: sent, the row marked sent
        yield* app.advance(app.config.simulatorReceiptDelayMs + 100)
        const read = yield* app.call("GET", `/api/sms/v2/messages/${sent.body.id}/`, { token: apiKey })
        expect(read.body.status).toBe("delivered")
        expect(yield* row()).toEqual([{ owedAfterMs: null }])
      })
  )
})

// the simulator sending its receipts by itself (system clock, background fibers running)
withApp({ label: "simown", config: { schedulerEnabled: true, simulatorReceiptDelayMs: 1_500 } })(
  `the simulator's own receipts (${backend})`,
  (it) => {
    it.effect(
      "a receipt is sent by the process that took the message when it falls due; its row is owed to any process only 5 s later",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey, sent, row } = yield* sentWithRow
          // before the receipt falls due (1.5 s), its row is owed to the rounds only after the resend time (6.5 s)
          expect(yield* row()).toEqual([{ owedAfterMs: 5_000 }])
          // delivered well before a round would take it: this process sent it, then marked it sent
          const read = app.call("GET", `/api/sms/v2/messages/${sent.body.id}/`, { token: apiKey })
          const delivered = yield* eventuallyEffect(read, (r) => r.body?.status === "delivered", {
            timeoutMs: 4_500,
            what: "delivered"
          })
          expect(delivered.body.status).toBe("delivered")
          yield* eventuallyEffect(row(), (rows) => rows[0]?.owedAfterMs === null, {
            timeoutMs: 2_000,
            what: "the receipt marked sent"
          })
        })
    )
  }
)
