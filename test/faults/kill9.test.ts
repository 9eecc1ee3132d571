/**
 * `kill -9` of a service process under mixed load (immediate sends to every simulator number,
 * scheduled messages, batches, contact upserts; two organisations, one of them drawing from two
 * lots), on the suite's own PostgreSQL; then a new process on the same database and an identical
 * replay of every key that was sent. What must hold:
 *
 * - every key gets a definite answer (no 409 idempotency_in_progress, no 503, no 500), those of
 *   requests in flight at the kill within the recovery bound (a lease runs out 8 s after its
 *   last renewal), and every key answered before the kill answers the same again, replayed;
 * - no creation made twice (one message per message key, its recipients per batch key) and no
 *   message handed to the provider twice;
 * - every message ends where its number and its reception say (final, `unknown` on the number
 *   never verified, `accepted` on the one without a receipt);
 * - the ledger invariant, and every lot's counters exactly those of its messages' holds.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { serve } from "../support/ServedProcess.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { drive, mixedOperation, perform, type Result } from "./support/Operations.ts"
import { atRest, ledgerProblems, statusCounts, outcomeProblems, readFacts, withDatabase } from "./support/Outcomes.ts"
import { creationProblems, replayEvery, replayProblems, unexpectedAnswers } from "./support/Replay.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { timelineEntriesSql } from "../support/Timelines.ts"

const postgres = useThrowawayPostgres("faults-kill9")

/** Operations sent, and how many answers come back before the kill. */
const operationCount = 1200
const answersBeforeKill = 400
/** Longest a key may stay in progress after the kill: the lease (8 s) and a recovery round, with room for a loaded machine. */
const recoveryBoundMs = 30_000

describe("kill -9 of a service process under mixed load, then a new process and an identical replay of every key", () => {
  it("answers every key as before, creates and submits nothing twice, settles every message, keeps the ledger exact", async () => {
    const env = {
      DATABASE_URL: postgres().url,
      SMS_SIMULATOR_RECEIPT_DELAY_MS: "1000",
      SMS_SIMULATOR_SLOW_MS: "1500",
      SMS_VERIFY_INTERVAL_MS: "1000"
    }
    const first = await serve(env)
    const orgs = [await first.newOrg({ credits: 100_000 }), await first.newOrg({ credits: 100_000 })]
    // a lot that expires first is drawn from first: it runs out mid-load, so reservations span two lots
    expect(
      (
        await first.admin("POST", `/organizations/${orgs[0]!.orgId}/credits`, {
          amount: 150,
          valid_until: "2099-12-31"
        })
      ).status
    ).toBe(201)
    const apiKeyOf = new Map<string, string>()
    const run = `kill9-${Date.now()}`

    const results: Array<Result> = []
    let killedAt = 0
    const killWhenDue = setInterval(() => {
      if (killedAt === 0 && results.length >= answersBeforeKill) {
        first.started.child.kill("SIGKILL")
        killedAt = Date.now()
      }
    }, 10)
    const loadStart = Date.now()
    await drive({
      count: operationCount,
      make: (i) => mixedOperation(run, i, Date.now()),
      send: (op, i) => {
        apiKeyOf.set(op.key, orgs[i % 2]!.apiKey)
        return perform(first, orgs[i % 2]!.apiKey, op)
      },
      clients: 16,
      results,
      stop: () => killedAt !== 0
    })
    clearInterval(killWhenDue)
    expect(killedAt, "the process was killed mid-load").toBeGreaterThan(0)
    expect(await first.started.exited, "killed by a signal").toBeNull()

    const beforeKill = results.filter((r) => r.answeredAt < killedAt && r.status !== undefined)
    const inFlight = results.filter((r) => !beforeKill.includes(r))
    expect(beforeKill.length).toBeGreaterThanOrEqual(answersBeforeKill - 16)
    expect(inFlight.length, "requests in flight at the kill").toBeGreaterThan(0)
    expect(unexpectedAnswers(beforeKill), "answers before the kill").toEqual([])

    // a new process on the same database; every key sent is replayed identically until definite
    const second = await serve(env)
    const restartedAt = Date.now()
    const sent = results.map((r) => ({ op: r.op, apiKey: apiKeyOf.get(r.op.key)! }))
    const replays = await replayEvery(second, sent, killedAt + recoveryBoundMs)
    const lastReplayAfterKill = Math.max(...replays.map((r) => r.answeredAt)) - killedAt
    expect(replayProblems(beforeKill, replays), "replays").toEqual([])
    expect(creationProblems(replays, (await readFacts(postgres().url)).messages), "messages per creation").toEqual([])

    // every message settles where its number and its reception say; nothing was submitted twice
    const settled = await atRest(postgres().url)
    const atRestAfterKill = Date.now() - killedAt
    expect(outcomeProblems(settled.messages), "submissions and final statuses").toEqual([])
    expect(ledgerProblems(settled), "ledger").toEqual([])

    const recovery = await withDatabase(
      postgres().url,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{
          n: number
          last: Date | null
        }>`SELECT count(*)::integer AS n, max(at) AS last FROM (${sql.literal(timelineEntriesSql)}) AS e WHERE source = 'recovery'`
      })
    )
    printFigures("kill9", {
      requests_sent: results.length,
      answered_before_kill: beforeKill.length,
      in_flight_at_kill: inFlight.length,
      kill_after_s: seconds(killedAt - loadStart),
      new_process_serving_after_s: seconds(restartedAt - killedAt),
      last_key_answered_after_s: seconds(lastReplayAfterKill),
      recovered_by_new_process: recovery[0]!.n,
      last_recovery_after_s: recovery[0]!.last === null ? null : seconds(recovery[0]!.last.getTime() - killedAt),
      all_at_rest_after_s: seconds(atRestAfterKill),
      messages: settled.messages.length,
      statuses: statusCounts(settled.messages),
      submitted_twice: settled.messages.filter((m) => m.submissions > 1).length,
      lots: settled.lots.length
    })
  })
})
