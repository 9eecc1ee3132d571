/**
 * `kill -9` of a service process while OneAPI sends are in flight (issue 41): the routing file's
 * one entry is a OneAPI route (docs/operators.md#oneapi-routes) with `verify_by_correlator`, to
 * the OneAPI simulator run as a process of its own (its journal in a temporary directory), whose
 * every 201 comes 1.5 s after it took the message (SMS_ONEAPI_RESPONSE_DELAY_MS). Sixteen
 * clients send immediate and scheduled messages and batches, each under its Idempotency-Key, to
 * distinct numbers (and a few to +261340000009, which is never answered); the service is killed
 * once some have been answered; a new process starts on the same database and port (the notify
 * URLs the simulator holds name it), and every key sent is replayed identically until definite.
 * What must hold, once every message is at rest (bounded):
 *
 * - every key answered before the kill answers the same again (the same message id), every
 *   answer is one its kind may give, and each key made one creation;
 * - the simulator took each correlator (message id) at most once, and only the service's;
 * - a message it took ends `delivered` under the id of its 201, or, that answer lost with the
 *   process, under its correlator once verified from `unknown` (docs/operators.md#oneapi-routes),
 *   never sent again as a new send; one it never took is `failed`, or `unknown` on the number
 *   that never answers, without a provider id;
 * - no receipt stays matched to nothing, and the ledger is exact (test/faults/support/Outcomes.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { eventually } from "../support/Eventually.ts"
import { messagesByApi, readEmbedded } from "./support/EmbeddedReads.ts"
import { startOneApiProcess, takenSms } from "../support/OneApiProcess.ts"
import { isRunning, type Served, serve } from "../support/ServedProcess.ts"
import { freePort } from "../support/ServiceProcess.ts"
import { kill9 } from "../support/SimulatorProcess.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { oneApiTakenProblems, restsAsTakenBy, takenByCorrelator } from "./support/OneApiOutcomes.ts"
import { drive, type Operation, perform, type Result } from "./support/Operations.ts"
import { ledgerProblems, readFacts, statusCounts } from "./support/Outcomes.ts"
import { creationProblems, replayEvery, replayProblems, unexpectedAnswers } from "./support/Replay.ts"
import { pendingReceipts } from "./support/SmscOutcomes.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { readTimelines, type Timeline, timelinesWhen, went } from "./support/Timelines.ts"

const postgres = useThrowawayPostgres("faults-oneapi-service-kill9")

const route = "orange"
const operationCount = 160
const answersBeforeKill = 32
/** Longest a key may stay in progress after the kill: the lease (8 s) and a recovery round, with room for a loaded machine. */
const recoveryBoundMs = 30_000
/** The lease (8 s), verification from 1 s, and the receipts told again (docs/operators.md#the-oneapi-simulator), with room for a loaded machine. */
const atRestTimeoutMs = 60_000

const number = (i: number) => `+26132${String(1_000_000 + i).padStart(7, "0")}`
const never = testNumbers.unknownForGood
const oneSegment = "Fault suite: kill -9 under OneAPI sends"
const twoSegments = `Fault suite, two segments: ${"0123456789".repeat(20)}`.slice(0, 200)

/** The `i`-th operation: mostly immediate sends, one in eight scheduled, one in eight a batch of 4, each to numbers of its own. */
const operation = (i: number, now: number): Operation => {
  const key = `oneapi-kill9-${now}-${i}`
  const text = i % 3 === 0 ? twoSegments : oneSegment
  const at = (fromMs: number) => new Date(now + fromMs + ((i * 7919) % 3000)).toISOString()
  if (i % 8 === 4)
    return { kind: "scheduled", key, path: "/api/sms/v2/messages/", body: { to: number(i), text, send_at: at(1000) } }
  if (i % 8 === 5) {
    const recipients = Array.from({ length: 4 }, (_, j) => number(10_000 + 10 * i + j))
    return { kind: "batch", key, path: "/api/sms/v2/message-batches/", body: { recipients, text, send_at: at(1500) } }
  }
  return { kind: "immediate", key, path: "/api/sms/v2/messages/", body: { to: i % 40 === 7 ? never : number(i), text } }
}

/**
 * The database of a run: its variables, and how the checks read it once every message is at rest
 * (a throwaway PostgreSQL while the service runs, as smpp-service-kill9.test.ts reads it; the
 * embedded one, which serves only its own process, once the service has stopped).
 */
interface Database {
  readonly env: Record<string, string>
  /** Reads the timelines until every message rests, in a service process that serves `served`. */
  readonly whenAtRest: (
    served: Served,
    orgId: string,
    rests: (m: Pick<Timeline, "id" | "toNumber" | "status">) => boolean
  ) => Promise<void>
  /** Runs `read` against the database, once at rest (the service stopped, for the embedded one). */
  readonly read: <A>(served: Served, read: (url: string) => Promise<A>) => Promise<A>
}

const onThrowawayPostgres = (): Database => ({
  env: { DATABASE_URL: postgres().url },
  whenAtRest: async (_served, orgId, rests) => {
    await timelinesWhen(postgres().url, [orgId], 0, rests, atRestTimeoutMs)
  },
  read: (_served, read) => read(postgres().url)
})

const onEmbedded = (dataDir: string): Database => ({
  env: { SMS_DATA_DIR: dataDir },
  whenAtRest: async (served, orgId, rests) => {
    await eventually(
      () => messagesByApi(served, orgId),
      (messages) => messages.every(rests),
      { timeoutMs: atRestTimeoutMs, intervalMs: 500, what: "every message at rest" }
    ).catch(() => undefined)
  },
  read: async (served, read) => {
    if (isRunning(served.started)) {
      served.started.child.kill("SIGTERM")
      expect(await served.started.exited, "stopped on SIGTERM").toBe(0)
    }
    return readEmbedded(dataDir, read)
  }
})

describe("kill -9 of a service process with OneAPI sends in flight, then a new process and a replay of every key", () => {
  it("on a PostgreSQL server: answers every key as before, has the simulator take no correlator twice, settles every message, keeps the ledger exact", async () => {
    await scenario("postgres", () => onThrowawayPostgres())
  })

  it("on the embedded database: the same", async () => {
    await scenario("embedded", (dir) => onEmbedded(join(dir, "db")))
  })
})

const scenario = async (name: string, database: (dir: string) => Database): Promise<void> => {
  const dataDir = mkdtempSync(join(tmpdir(), "faults-oneapi-"))
  const db = database(dataDir)
  const simDir = join(dataDir, "sim")
  const simPort = await freePort()
  const sim = await startOneApiProcess(simPort, simDir, {
    SMS_ONEAPI_RESPONSE_DELAY_MS: "1500",
    SMS_SIMULATOR_RECEIPT_DELAY_MS: "1000",
    // a receipt refused while the service restarts (or its message not yet verified) comes again
    // 0.25, 0.5, 1, 2 and then every 4 s, not 5, 10, 20 s later: it applies soon after the verification
    SMS_ONEAPI_RECEIPT_RETRY_MS: "250"
  })
  try {
    const base = `http://127.0.0.1:${simPort}`
    const providersFile = join(dataDir, "providers.json")
    writeFileSync(
      providersFile,
      JSON.stringify([
        {
          type: "oneapi",
          name: route,
          base_url: base,
          token_url: `${base}/oauth/v3/token`,
          client_id: "sim",
          client_secret: "sim",
          sender_address: "tel:+2610000",
          prefixes: ["*"],
          verify_by_correlator: true
        }
      ])
    )
    const env = {
      ...db.env,
      // the same port for both processes: the notify URLs the simulator holds name it
      PORT: String(await freePort()),
      SMS_PROVIDER: "smpp",
      SMS_PROVIDERS_FILE: providersFile,
      SMS_SMPP_RESPONSE_TIMEOUT_MS: "4000",
      SMS_VERIFY_INTERVAL_MS: "1000"
    }
    const first = await serve(env)
    const { orgId, apiKey } = await first.newOrg({ credits: 10_000 })

    const results: Array<Result> = []
    let killedAt = 0
    let takenAtKill = new Set<string>()
    const killer = setInterval(() => {
      if (killedAt !== 0 || results.length < answersBeforeKill) return
      first.started.child.kill("SIGKILL")
      killedAt = Date.now()
      takenAtKill = new Set(takenSms(simDir).map((t) => t.correlator))
    }, 5)
    const start = Date.now()
    await drive({
      count: operationCount,
      make: (i) => operation(i, Date.now()),
      send: (op) => perform(first, apiKey, op),
      clients: 16,
      results,
      stop: () => killedAt !== 0
    })
    clearInterval(killer)
    expect(killedAt, "the process was killed mid-load").toBeGreaterThan(0)
    expect(await first.started.exited, "killed by a signal").toBeNull()
    const before = results.filter((r) => r.status !== undefined && r.answeredAt < killedAt)
    const cut = results.filter((r) => !before.includes(r))
    expect(cut.length, "requests cut by the kill").toBeGreaterThan(0)
    expect(unexpectedAnswers(before), "answers before the kill").toEqual([])

    const second = await serve(env)
    const restartedAt = Date.now()
    const replays = await replayEvery(
      second,
      results.map((r) => ({ op: r.op, apiKey })),
      killedAt + recoveryBoundMs
    )
    const lastReplayAt = Math.max(...replays.map((r) => r.answeredAt))
    expect.soft(replayProblems(before, replays), "replays").toEqual([])

    const taken = () => takenByCorrelator(takenSms(simDir))
    const mayStayUnknown = (to: string) => to === never
    await db.whenAtRest(second, orgId, (m) => restsAsTakenBy(taken(), mayStayUnknown)(m))
    const atRestAt = Date.now()
    const takenAtRest = taken()
    const health = (await second.call("GET", "/health")).status
    const { timelines, facts, receiptsPending } = await db.read(second, async (url) => ({
      timelines: await readTimelines(url, [orgId]),
      facts: await readFacts(url),
      receiptsPending: await pendingReceipts(url)
    }))
    expect.soft(health).toBe(200)
    expect.soft(creationProblems(replays, facts.messages), "messages per creation").toEqual([])
    expect
      .soft(oneApiTakenProblems(timelines, takenAtRest, route, mayStayUnknown), "messages against the journal")
      .toEqual([])
    // the sends the kill cut: taken before it, their 201 lost with the process, settled by correlator
    const lostAnswers = timelines.filter((m) => takenAtKill.has(m.id) && m.providerRef === `${route}:c:${m.id}`)
    expect(lostAnswers.length, "sends in flight at the kill, verified by correlator").toBeGreaterThan(0)
    expect.soft(receiptsPending, "receipts matched to no message").toBe(0)
    expect.soft(ledgerProblems(facts), "ledger").toEqual([])

    printFigures(`oneapi-service-kill9 (${name})`, {
      requests_sent: results.length,
      answered_before_kill: before.length,
      cut_by_kill: cut.length,
      kill_after_s: seconds(killedAt - start),
      taken_at_kill: takenAtKill.size,
      new_process_serving_after_s: seconds(restartedAt - killedAt),
      last_key_answered_after_s: seconds(lastReplayAt - killedAt),
      all_at_rest_after_kill_s: seconds(atRestAt - killedAt),
      messages: timelines.length,
      taken_by_simulator: takenAtRest.size,
      taken_twice: [...takenAtRest.values()].filter((ids) => ids.length > 1).length,
      statuses: statusCounts(timelines),
      recovered_unknown: timelines.filter((m) => went(m, "processing>unknown@recovery")).length,
      answer_lost_verified_by_correlator: lostAnswers.length,
      receipts_matched_to_nothing: receiptsPending
    })
  } finally {
    await kill9(sim)
    rmSync(dataDir, { recursive: true, force: true })
  }
}
