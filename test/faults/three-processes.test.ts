/**
 * Three service processes on one database (the suite's own PostgreSQL) draining 10,000 due
 * messages, admitted through the API as ten batches of 1000 due at the same instant. What must
 * hold: each message handed to the provider exactly once (the simulator's count), by one of the
 * three, each of which takes part; one dispatch in each timeline; all delivered; the ledger exact.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { parseSamples, sampleValue } from "../observability/prometheus.ts"
import { serve, type Served } from "../support/ServedProcess.ts"
import { adminToken } from "../support/TestApp.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { atRest, ledgerProblems, outcomeProblems, statusCounts, withDatabase } from "./support/Outcomes.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { timelineEntriesSql } from "../support/Timelines.ts"

const postgres = useThrowawayPostgres("faults-three-processes")

const batches = 10
const batchSize = 1000
const dueCount = batches * batchSize
/** Room to admit the ten batches before they fall due (if it takes longer, the drain starts with the admissions). */
const dueInMs = 10_000

/** Submissions this process made, from its own metrics (one series per provider result). */
const submissionsBy = async (p: Served): Promise<number> => {
  const reply = await p.call("GET", "/metrics", { token: adminToken })
  expect(reply.status).toBe(200)
  const samples = parseSamples(reply.text)
  return ["accepted", "rejected", "unknown", "unreachable"].reduce(
    (n, result) => n + sampleValue(samples, "sms_provider_submit_duration_seconds_count", { result }),
    0
  )
}

describe("three service processes on one database draining 10,000 due messages", () => {
  it("submit each exactly once, all three taking part, and deliver every one", async () => {
    const env = { DATABASE_URL: postgres().url, SMS_SIMULATOR_RECEIPT_DELAY_MS: "500" }
    const first = await serve(env)
    const processes = [first, ...(await Promise.all([serve(env), serve(env)]))]
    const { apiKey } = await first.newOrg({ credits: dueCount })

    const sendAt = new Date(Date.now() + dueInMs)
    const admissionStart = Date.now()
    const admitted = await Promise.all(
      Array.from({ length: batches }, (_, b) =>
        processes[b % 3]!.call("POST", "/api/sms/v2/message-batches/", {
          token: apiKey,
          headers: { "idempotency-key": `three-${b}` },
          body: {
            recipients: Array.from(
              { length: batchSize },
              (_, j) => `+26133${String(b * batchSize + j).padStart(7, "0")}`
            ),
            text: "Fault suite: three processes, one database.",
            send_at: sendAt.toISOString()
          }
        })
      )
    )
    const admittedAt = Date.now()
    expect(
      admitted.map((r) => r.status),
      admitted.map((r) => r.text).join("\n")
    ).toEqual(admitted.map(() => 202))

    const settled = await atRest(postgres().url, 300_000)
    const deliveredAt = Date.now()
    expect(settled.messages.length).toBe(dueCount)
    expect(statusCounts(settled.messages)).toEqual({ delivered: dueCount })
    expect(
      settled.messages.filter((m) => m.submissions !== 1).map((m) => `${m.id}: ${m.submissions}`),
      "not submitted exactly once"
    ).toEqual([])
    expect(outcomeProblems(settled.messages)).toEqual([])
    expect(ledgerProblems(settled), "ledger").toEqual([])

    const timeline = await withDatabase(
      postgres().url,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ dispatches: number; messages: number; lastAccepted: Date }>`SELECT
          count(*) FILTER (WHERE from_status = 'scheduled' AND to_status = 'processing')::integer AS dispatches,
          count(DISTINCT message_id) FILTER (WHERE from_status = 'scheduled' AND to_status = 'processing')::integer AS messages,
          max(at) FILTER (WHERE to_status = 'accepted') AS last_accepted
        FROM (${sql.literal(timelineEntriesSql)}) AS e`
        return row!
      })
    )
    expect({ dispatches: timeline.dispatches, messages: timeline.messages }, "one dispatch per message").toEqual({
      dispatches: dueCount,
      messages: dueCount
    })

    const perProcess = await Promise.all(processes.map(submissionsBy))
    expect(
      perProcess.filter((n) => n === 0),
      `submissions per process: ${perProcess.join(", ")}`
    ).toEqual([])
    expect(
      perProcess.reduce((a, b) => a + b, 0),
      "submissions of the three"
    ).toBe(dueCount)

    const drainStart = Math.max(sendAt.getTime(), admittedAt)
    const drainMs = timeline.lastAccepted.getTime() - drainStart
    printFigures("three-processes", {
      messages: dueCount,
      admission_of_10_batches_s: seconds(admittedAt - admissionStart),
      all_accepted_after_due_s: seconds(drainMs),
      messages_per_s: Math.round(dueCount / (drainMs / 1000)),
      all_delivered_after_due_s: seconds(deliveredAt - drainStart),
      submissions_per_process: perProcess,
      submitted_twice: settled.messages.filter((m) => m.submissions > 1).length
    })
  })
})
