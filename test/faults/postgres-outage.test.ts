/**
 * PostgreSQL (the suite's own) stopped under a steady load of requests, then, once it is back,
 * killed with `kill -9` of its postmaster; each time down for 10 s, then started again, while one
 * service process keeps serving. What must hold:
 *
 * - while the database is down, every answer to an API call is 503 service_unavailable with
 *   Retry-After and the spec's error body, `/ready` is 503 and `/health` 200; never a 500, never
 *   a connection closed without an answer, then or at any other time;
 * - the same process recovers without a restart: creations are answered again, `/ready` is 200;
 * - messages that fell due while the database was down are sent once it is back;
 * - every key sent, replayed identically afterwards, gets a definite answer (the same as before
 *   when it had one); nothing is created or submitted twice; every message ends where its number
 *   says; the ledger and the lot counters are exact;
 * - an outage is logged once (issue 18, item 11): no ERROR line; each background loop, group
 *   commit and the edge a WARN when the database goes, an INFO when it works again: at most two
 *   WARN lines of one message per outage, the edge's once more per API client that waited
 *   through it (the counts are in the figures).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { eventually } from "../support/Eventually.ts"
import { isRunning, serve } from "../support/ServedProcess.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import {
  codeOf,
  drive,
  type Exchange,
  exchange,
  isDefinite,
  mixedOperation,
  perform,
  resourceOf,
  type Result
} from "./support/Operations.ts"
import { atRest, ledgerProblems, outcomeProblems, readFacts, statusCounts, withDatabase } from "./support/Outcomes.ts"
import { creationProblems, replayEvery, replayProblems, unexpectedAnswers } from "./support/Replay.ts"
import { countByMessage, logLines } from "./support/LogLines.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { timelineEntriesSql } from "../support/Timelines.ts"

const postgres = useThrowawayPostgres("faults-postgres-outage")

const outageMs = 10_000
/** Clients of the load, each sending creations 50 ms apart. */
const loadClients = 4
/** Concurrent API clients: those of the load and the probe (its balance read). */
const apiClients = loadClients + 1
/**
 * WARN lines of one message during one outage, at most: one when the outage starts (and one of
 * slack); the edge logs its line again for a request that waited through the outage and fails
 * once calls are answered again (its outage has ended, a new one seems to start), at most once
 * per API client.
 */
const warnLinesMax = (message: string): number => (message.startsWith("database unreachable") ? 1 + apiClients : 2)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Probe extends Exchange {
  readonly path: string
}

interface Outage {
  readonly how: "stop" | "kill9"
  /** Its stop or kill began. */
  readonly began: number
  /** The database is down from `down` (stopped, or its backends gone) until `upAt` (its start begins). */
  readonly down: number
  readonly upAt: number
  /** Its start returned. */
  readonly up: number
  /** The first creation answered after it, and the first `/ready` 200. */
  readonly recoveredAt: number
  readonly readyAt: number
  /** Scheduled messages due while it was down. */
  readonly due: ReadonlyArray<string>
}

/** Whether the exchange is the spec's 503 service_unavailable with Retry-After. */
const isServiceUnavailable = (e: Exchange): boolean =>
  e.status === 503 &&
  codeOf(e) === "service_unavailable" &&
  typeof e.body?.error?.message === "string" &&
  Number(e.retryAfter) > 0

const describeExchange = (e: Exchange & { readonly path?: string; readonly op?: { readonly key: string } }) =>
  `${e.path ?? e.op?.key}: ${e.status ?? e.closed} ${JSON.stringify(e.body)} retry-after ${e.retryAfter}`

describe("PostgreSQL stopped, then killed with kill -9, under a steady load", () => {
  it("answers 503 service_unavailable while it is down and never 500, recovers without a restart, sends what fell due", async () => {
    const served = await serve({
      DATABASE_URL: postgres().url,
      SMS_SIMULATOR_RECEIPT_DELAY_MS: "1000",
      SMS_SIMULATOR_SLOW_MS: "1500",
      SMS_VERIFY_INTERVAL_MS: "1000",
      // the lines an outage ends with are INFO
      LOG_LEVEL: "info"
    })
    const { apiKey } = await served.newOrg({ credits: 100_000 })
    const run = `outage-${Date.now()}`
    const pid = served.started.child.pid

    // the load: loadClients sending creations 50 ms apart; probes of /ready, /health and the balance
    const results: Array<Result> = []
    const probes: Array<Probe> = []
    let stopping = false
    const load = drive({
      count: Number.POSITIVE_INFINITY,
      make: (i) => mixedOperation(run, i, Date.now()),
      send: async (op) => {
        const result = await perform(served, apiKey, op)
        await sleep(50)
        return result
      },
      clients: loadClients,
      results,
      stop: () => stopping
    })
    const probing = (async () => {
      while (!stopping) {
        for (const path of ["/ready", "/health", "/api/sms/v2/balance/"])
          probes.push({ path, ...(await exchange(served, "GET", path, { token: apiKey })) })
        await sleep(200)
      }
    })()

    const outages: Array<Outage> = []
    for (const how of ["stop", "kill9"] as const) {
      await sleep(3_000)
      // due while the database is down
      const due = await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          perform(served, apiKey, {
            kind: "scheduled",
            key: `${run}-due-${how}-${j}`,
            path: "/api/sms/v2/messages/",
            body: {
              to: j % 2 === 0 ? testNumbers.delivered : "+261341234567",
              text: `due during the ${how}`,
              send_at: new Date(Date.now() + 2_000 + j * 500).toISOString()
            }
          })
        )
      )
      expect(
        due.map((d) => d.status),
        "scheduled before the outage"
      ).toEqual(due.map(() => 202))
      results.push(...due)
      const began = Date.now()
      if (how === "stop") await postgres().stop()
      else await postgres().kill9()
      const down = Date.now()
      await sleep(outageMs)
      const upAt = Date.now()
      await postgres().start()
      const up = Date.now()
      const [recoveredAt, readyAt] = await eventually(
        async () => [
          results.find((r) => r.sentAt >= up && r.status !== undefined && r.status < 300)?.answeredAt,
          probes.find((p) => p.sentAt >= up && p.path === "/ready" && p.status === 200)?.answeredAt
        ],
        (at) => at.every((t) => t !== undefined),
        { timeoutMs: 60_000, intervalMs: 100, what: "creations answered and /ready 200 after the start" }
      )
      outages.push({
        how,
        began,
        down,
        upAt,
        up,
        recoveredAt: recoveredAt!,
        readyAt: readyAt!,
        due: due.map((d) => resourceOf(d)!)
      })
    }
    await sleep(2_000)
    stopping = true
    await Promise.all([load, probing])

    expect(isRunning(served.started) && served.started.child.pid === pid, "the same process served throughout").toBe(
      true
    )
    const everything: Array<Probe | Result> = [...results, ...probes]
    expect(
      everything.filter((e) => e.closed !== undefined).map(describeExchange),
      "connections closed without an answer"
    ).toEqual([])
    expect(everything.filter((e) => e.status === 500).map(describeExchange), "500 internal_error").toEqual([])
    // creations get the answers the database gives them, or 503 service_unavailable; probes 200 or 503
    expect(
      results.filter((r) => !isDefinite(r) && !isServiceUnavailable(r)).map(describeExchange),
      "creations neither answered nor 503"
    ).toEqual([])
    expect(unexpectedAnswers(results), "answers to creations").toEqual([])
    expect(
      probes.filter((p) => p.status !== 200 && !isServiceUnavailable(p)).map(describeExchange),
      "probes neither 200 nor 503"
    ).toEqual([])

    for (const o of outages) {
      const during = <E extends Exchange>(list: ReadonlyArray<E>) =>
        list.filter((e) => e.sentAt >= o.down && e.answeredAt <= o.upAt)
      const api = [...during(results), ...during(probes).filter((p) => p.path.startsWith("/api/"))]
      expect(api.length, `API calls during the ${o.how}`).toBeGreaterThan(20)
      expect(
        api.filter((e) => !isServiceUnavailable(e)).map(describeExchange),
        `API answers during the ${o.how}`
      ).toEqual([])
      const ready = during(probes).filter((p) => p.path === "/ready")
      expect(ready.length).toBeGreaterThan(0)
      expect(ready.filter((p) => !isServiceUnavailable(p)).map(describeExchange), `/ready during the ${o.how}`).toEqual(
        []
      )
      expect(
        during(probes)
          .filter((p) => p.path === "/health" && p.status !== 200)
          .map(describeExchange),
        `/health during the ${o.how}`
      ).toEqual([])
    }

    // every key sent, replayed identically: a definite answer, the same one when it had one
    const replays = await replayEvery(
      served,
      results.map((r) => ({ op: r.op, apiKey })),
      Date.now() + 60_000
    )
    expect(replayProblems(results, replays), "replays").toEqual([])
    expect(creationProblems(replays, (await readFacts(postgres().url)).messages), "messages per creation").toEqual([])

    const settled = await atRest(postgres().url)
    expect(outcomeProblems(settled.messages), "submissions and final statuses").toEqual([])
    expect(ledgerProblems(settled), "ledger").toEqual([])

    // what fell due while the database was down was sent once it was back
    const dispatched = await withDatabase(
      postgres().url,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{
          messageId: string
          at: Date
        }>`SELECT message_id::text, at FROM (${sql.literal(timelineEntriesSql)}) AS e
        WHERE from_status = 'scheduled' AND to_status = 'processing'
          AND message_id = ANY(${outages.flatMap((o) => o.due)}::uuid[])`
      })
    )
    const dispatchedAt = new Map(dispatched.map((d) => [d.messageId, d.at.getTime()]))
    for (const o of outages) {
      expect(
        o.due.filter((id) => !((dispatchedAt.get(id) ?? 0) >= o.upAt)),
        `due during the ${o.how}, not sent after it`
      ).toEqual([])
    }

    // what the outages made the process log, from its JSON lines: no ERROR; from each background
    // loop, group commit and the edge a WARN when it finds the database gone, an INFO when it works
    // again: at most a few WARN lines of one message per outage (warnLinesMax), the in-process
    // simulator's included (it logged each failed poll and submission before)
    const lines = logLines(served.started.output().stdout)
    const during = outages.map((o, i) =>
      lines.filter((l) => l.at >= o.began && l.at < (outages[i + 1]?.began ?? Number.POSITIVE_INFINITY))
    )
    const warnings = during.map((w) => countByMessage(w, "WARN"))
    expect
      .soft(
        lines.filter((l) => l.level === "ERROR").map((l) => l.message),
        "ERROR lines"
      )
      .toEqual([])
    outages.forEach((o, i) => {
      const floods = Object.entries(warnings[i]!).filter(([message, n]) => n > warnLinesMax(message))
      expect.soft(Object.fromEntries(floods), `WARN lines logged more than a few times during the ${o.how}`).toEqual({})
    })

    printFigures("postgres-outage", {
      requests: everything.length,
      answered_500: everything.filter((e) => e.status === 500).length,
      closed_without_answer: everything.filter((e) => e.closed !== undefined).length,
      outages: outages.map((o) => {
        const down = <E extends Exchange>(list: ReadonlyArray<E>) =>
          list.filter((e) => e.sentAt >= o.down && e.answeredAt <= o.upAt)
        const api = [...down(results), ...down(probes).filter((p) => p.path.startsWith("/api/"))]
        const ready = down(probes).filter((p) => p.path === "/ready")
        return {
          how: o.how === "stop" ? "pg_ctl stop -m fast" : "kill -9 postmaster",
          down_s: seconds(o.upAt - o.down),
          api_answers_while_down: api.length,
          of_which_503_service_unavailable: api.filter(isServiceUnavailable).length,
          slowest_503_s: seconds(Math.max(...api.map((e) => e.answeredAt - e.sentAt))),
          ready_503_while_down: `${ready.filter(isServiceUnavailable).length}/${ready.length}`,
          server_start_s: seconds(o.up - o.upAt),
          creations_answered_after_start_s: seconds(o.recoveredAt - o.up),
          ready_200_after_start_s: seconds(o.readyAt - o.up),
          due_while_down_sent_after_start_s: seconds(Math.max(...o.due.map((id) => dispatchedAt.get(id)!)) - o.up)
        }
      }),
      log_lines: outages.map((o, i) => ({
        how: o.how,
        error: during[i]!.filter((l) => l.level === "ERROR").length,
        warn: warnings[i],
        info: countByMessage(
          during[i]!.filter((l) => l.message !== "http"),
          "INFO"
        )
      })),
      keys_replayed: replays.length,
      messages: settled.messages.length,
      statuses: statusCounts(settled.messages),
      submitted_twice: settled.messages.filter((m) => m.submissions > 1).length
    })
  })
})
