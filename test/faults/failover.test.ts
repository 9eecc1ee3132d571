/**
 * A PostgreSQL that fails over under load (docs/failover.md, issue 42). Each case runs on servers
 * of its own: a primary and a synchronous standby (ReplicatedPostgres.ts), a TCP proxy the test
 * points at the primary and later moves (HAProxy's place), two service processes whose
 * DATABASE_URL names the proxy, on SMPP to the SMSC simulator (one process for the file; its
 * journal says which destinations it took), and clients sending immediate sends, scheduled
 * messages and batches at a steady rate (FailoverLoad.ts), every one under its own key and to
 * numbers of its own. The cases:
 *
 * - kill -9 of the primary mid-load; a second later the standby is promoted and the proxy moved;
 * - a planned switchover: fast shutdown of the primary (its sessions end with 57P01), promotion,
 *   the proxy moved;
 * - the proxy moved to the standby before its promotion: 3 s of a server that cannot take
 *   writes (connections refused as read-only, 25006), then the primary stopped and the standby
 *   promoted;
 * - negative control: asynchronous replication and a standby cut off from its primary (its WAL
 *   receiver stopped), then kill -9 of the primary and promotion: the checker must find writes
 *   that were acknowledged and are lost, and destinations submitted twice, or it could not fail.
 *
 * What must hold in the three first (FailoverChecks.ts, Replay.ts, Outcomes.ts): every creation
 * answered 201 or 202 is in the database after the failover with its reservation; no destination
 * is taken twice by the SMSC, none without a message; every key replayed identically gets a
 * definite answer (the same as before when it had one), those without an answer or answered 503
 * included; no answer is a 500, at any time; the ledger exact (granted = consumed + reserved +
 * available + expired); the first creation answered 2xx within 10 s of the promotion; `/ready`
 * 503 while the proxy reaches the standby, naming recovery, and 200 again after.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/Eventually.ts"
import { killAll, saveOutputs, serve, type Served } from "../support/ServedProcess.ts"
import { freePort } from "../support/ServiceProcess.ts"
import { type SmscProcess, startSmscProcess, takenMessages } from "../support/SmscProcess.ts"
import { kill9 } from "../support/SimulatorProcess.ts"
import { TcpProxy } from "../support/TcpProxy.ts"
import {
  acknowledgedProblems,
  answered500,
  byStatus,
  firstWriteAfter,
  submissionProblems
} from "./support/FailoverChecks.ts"
import { failoverOperation, type Probe, probeReadiness, type Sent, steadyLoad } from "./support/FailoverLoad.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { codeOf, isDefinite } from "./support/Operations.ts"
import { ledgerProblems, readFacts, statusCounts } from "./support/Outcomes.ts"
import { receivesWal, type Replicated, startReplicated } from "./support/ReplicatedPostgres.ts"
import { creationProblems, replayEvery, replayProblems, unexpectedAnswers } from "./support/Replay.ts"
import { restsAsTaken, takenByNumber } from "./support/SmscOutcomes.ts"
import { readTimelines } from "./support/Timelines.ts"

/** Creations a second, across the two processes. */
const ratePerSecond = 40
/** Load before the fault, and after the promotion. */
const beforeFaultMs = 4_000
const afterPromotionMs = 5_000
/** A failover manager's time to decide, shortened: the primary is gone this long before the promotion. */
const detectionMs = 1_000
/** How long the proxy reaches the standby before its promotion. */
const onStandbyMs = 3_000
/** Creations the primary acknowledges after its standby was cut off, before its crash (negative control). */
const acknowledgedWhileCutOff = 20
/** The bound on the first write after a promotion. */
const firstWriteWithinMs = 10_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Fault {
  readonly at: number
  readonly promotedAt: number
  /** Negative control: when the standby stopped receiving WAL. */
  readonly cutAt?: number
}

interface Case {
  readonly name: string
  /** Distinguishes the case's destinations (FailoverLoad.ts `destination`). */
  readonly digit: number
  readonly synchronous: boolean
  /** Causes the fault; `acknowledgedSince(t)` counts the creations sent from `t` on and answered 201 or 202 so far. */
  readonly fault: (pair: Replicated, proxy: TcpProxy, acknowledgedSince: (t: number) => number) => Promise<Fault>
}

const moveTo = (proxy: TcpProxy, pg: Replicated["standby"]) => proxy.moveTo({ host: "127.0.0.1", port: pg.port })

const crash: Case["fault"] = async (pair, proxy) => {
  const at = Date.now()
  await pair.primary.kill9()
  await sleep(detectionMs)
  await pair.standby.promote()
  const promotedAt = Date.now()
  moveTo(proxy, pair.standby)
  return { at, promotedAt }
}

const switchover: Case["fault"] = async (pair, proxy) => {
  const at = Date.now()
  await pair.primary.stop()
  await pair.standby.promote()
  const promotedAt = Date.now()
  moveTo(proxy, pair.standby)
  return { at, promotedAt }
}

const proxyFirst: Case["fault"] = async (pair, proxy) => {
  const at = Date.now()
  moveTo(proxy, pair.standby)
  await sleep(onStandbyMs)
  await pair.primary.stop()
  await pair.standby.promote()
  return { at, promotedAt: Date.now() }
}

const cutOffThenCrash: Case["fault"] = async (pair, proxy, acknowledgedSince) => {
  await pair.standby.stopReceivingWal()
  await eventually(
    () => receivesWal(pair.standby.url),
    (receiving) => !receiving,
    { timeoutMs: 10_000, what: "the standby's WAL receiver stopped" }
  )
  const cutAt = Date.now()
  await eventually(
    async () => acknowledgedSince(cutAt),
    (n) => n >= acknowledgedWhileCutOff,
    { timeoutMs: 30_000, intervalMs: 100, what: `${acknowledgedWhileCutOff} creations acknowledged after the cut` }
  )
  return { ...(await crash(pair, proxy, acknowledgedSince)), cutAt }
}

let smsc: SmscProcess | undefined
let smscDir = ""
let smscPort = 0

beforeAll(async () => {
  smscDir = mkdtempSync(join(tmpdir(), "faults-failover-smsc-"))
  smscPort = await freePort()
  smsc = await startSmscProcess(smscPort, smscDir, { SMS_SIMULATOR_RECEIPT_DELAY_MS: "300" })
})

afterAll(async () => {
  await killAll()
  saveOutputs("faults-failover")
  if (smsc !== undefined) await kill9(smsc)
  rmSync(smscDir, { recursive: true, force: true })
})

interface Run {
  readonly fault: Fault
  readonly results: ReadonlyArray<Sent>
  readonly probes: ReadonlyArray<Probe>
  readonly services: ReadonlyArray<Served>
  readonly apiKey: string
  readonly orgId: string
  /** The new primary's own URL, for reading what the database holds. */
  readonly url: string
  readonly startedAt: number
}

/** Sets up the case's servers, proxy and services, runs the load through its fault, and hands the run to `judge`; tears everything down. */
const runCase = async (c: Case, judge: (run: Run) => Promise<void>): Promise<void> => {
  const startedAt = Date.now()
  const pair = await startReplicated(c.synchronous)
  const proxy = await TcpProxy.start({ host: "127.0.0.1", port: pair.primary.port })
  const services: Array<Served> = []
  try {
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
      SMS_PROVIDER: "smpp",
      SMS_SMPP_URL: `smpp://sim:sim@127.0.0.1:${smscPort}`,
      SMS_VERIFY_INTERVAL_MS: "1000"
    }
    services.push(await serve(env))
    services.push(await serve(env))
    const { orgId, apiKey } = await services[0]!.newOrg({ credits: 1_000_000 })

    const results: Array<Sent> = []
    const probes: Array<Probe> = []
    let stopping = false
    const run = `failover-${c.digit}-${Date.now()}`
    const load = steadyLoad({
      services,
      apiKey,
      ratePerSecond,
      make: (i) => failoverOperation(run, c.digit, i, Date.now()),
      results,
      stop: () => stopping
    })
    const probing = probeReadiness(services, probes, () => stopping)
    await sleep(beforeFaultMs)
    const fault = await c.fault(
      pair,
      proxy,
      (t) => results.filter((r) => r.sentAt >= t && (r.status === 201 || r.status === 202)).length
    )
    await sleep(afterPromotionMs)
    stopping = true
    await Promise.all([load, probing])
    await judge({ fault, results, probes, services, apiKey, orgId, url: pair.standby.url, startedAt })
  } finally {
    for (const s of services) s.started.child.kill("SIGKILL")
    await Promise.all(services.map((s) => s.started.exited))
    await proxy.close()
    await pair.remove()
  }
}

/** Replays the keys of `results` identically until each answer is definite (or a minute passes). */
const replayAll = (run: Run, results: ReadonlyArray<Sent>) =>
  replayEvery(
    run.services[0]!,
    results.map((r) => ({ op: r.op, apiKey: run.apiKey })),
    Date.now() + 60_000
  )

/** The figures every case prints: answers during the gap (from the fault to the first write after the promotion), timings. */
const gapFigures = (run: Run) => {
  const firstWrite = firstWriteAfter(run.results, run.fault.promotedAt)
  const gapEnd = firstWrite ?? Number.POSITIVE_INFINITY
  const inGap = run.results.filter((r) => r.answeredAt >= run.fault.at && r.sentAt <= gapEnd)
  return {
    creations: run.results.length,
    creations_by_status: byStatus(run.results),
    gap_answers_by_status: byStatus(inGap),
    slowest_gap_answer_s: seconds(Math.max(0, ...inGap.map((r) => r.answeredAt - r.sentAt))),
    first_write_after_promotion_s: firstWrite === undefined ? null : seconds(firstWrite - run.fault.promotedAt),
    fault_to_promotion_s: seconds(run.fault.promotedAt - run.fault.at),
    ready_by_status: byStatus(run.probes),
    answered_500: answered500([...run.results, ...run.probes]).length
  }
}

const ofDigit = (digit: number) => (to: string) => to.startsWith(`+26134${digit}`)

/**
 * A schedule refused as past (400 invalid_schedule) because its request waited through the gap
 * until its `send_at` had passed: the answer any request gets for a past schedule, not stored,
 * so a replay is refused the same way. Those are set apart from the replays' checks.
 */
const isPastWhenJudged = (r: Sent): boolean =>
  r.status === 400 && codeOf(r) === "invalid_schedule" && Date.parse(String(r.op.body.send_at)) <= r.answeredAt

/** The checks of a failover with synchronous replication: nothing acknowledged lost, nothing sent twice, no 500, writes again within 10 s. */
const failsOverCleanly = (c: Case) => async (run: Run) => {
  const judged = run.results.filter((r) => !isPastWhenJudged(r))
  expect.soft(answered500([...run.results, ...run.probes]), "answers 500 during the load").toEqual([])
  expect.soft(unexpectedAnswers(judged), "definite answers a creation may not give").toEqual([])
  const firstWrite = firstWriteAfter(run.results, run.fault.promotedAt)
  expect(firstWrite, "a creation answered 2xx after the promotion").toBeDefined()
  expect(firstWrite! - run.fault.promotedAt, "ms from the promotion to the first write").toBeLessThanOrEqual(
    firstWriteWithinMs
  )

  const acknowledged = acknowledgedProblems(run.results, (await readFacts(run.url)).messages)
  expect.soft(acknowledged, "acknowledged creations after the failover").toEqual([])

  const replays = await replayAll(run, judged)
  expect.soft(answered500(replays), "replays answered 500").toEqual([])
  expect.soft(replayProblems(judged, replays), "replays").toEqual([])

  // every message at rest: taken by the SMSC and delivered, or never taken and failed or unknown
  const { taken, timelines } = await eventually(
    async () => ({
      taken: takenMessages(smscDir).filter((t) => ofDigit(c.digit)(t.to)),
      timelines: await readTimelines(run.url, [run.orgId])
    }),
    ({ taken, timelines }) => timelines.every(restsAsTaken(takenByNumber(taken))),
    { timeoutMs: 60_000, intervalMs: 500, what: "every message at rest" }
  )
  const facts = await readFacts(run.url)
  expect.soft(creationProblems(replays, facts.messages), "messages per creation").toEqual([])
  expect.soft(submissionProblems(taken, facts.messages, ofDigit(c.digit)), "destinations taken by the SMSC").toEqual([])
  expect.soft(ledgerProblems(facts), "ledger").toEqual([])

  // each process ready again: its last /ready 200
  const lastReady = run.services.map((_, process) => run.probes.filter((p) => p.process === process).at(-1))
  expect
    .soft(
      lastReady.filter((p) => p?.status !== 200).map((p) => `${p?.process}: ${p?.status} ${JSON.stringify(p?.body)}`),
      "the last /ready of each process"
    )
    .toEqual([])

  const withoutAnswer = run.results.filter((r) => !isDefinite(r))
  printFigures(`failover ${c.name}`, {
    ...gapFigures(run),
    without_definite_answer_then_replayed: withoutAnswer.length,
    schedules_past_when_judged: run.results.length - judged.length,
    replays_by_status: byStatus(replays),
    messages: facts.messages.length,
    statuses: statusCounts(timelines),
    taken_by_smsc: taken.length,
    lost_acknowledged: acknowledged.length,
    case_s: seconds(Date.now() - run.startedAt)
  })
}

const cases: ReadonlyArray<Case> = [
  { name: "kill -9 of the primary", digit: 1, synchronous: true, fault: crash },
  { name: "switchover (fast shutdown)", digit: 2, synchronous: true, fault: switchover },
  { name: "proxy on the standby before its promotion", digit: 3, synchronous: true, fault: proxyFirst }
]

describe("a PostgreSQL that fails over under load, with a synchronous standby", () => {
  it.each(cases)(
    "$name: nothing acknowledged lost, nothing sent twice, no 500, writes within 10 s of the promotion",
    (c) =>
      runCase(c, async (run) => {
        if (c.fault === proxyFirst) {
          // while the proxy reached the standby: /ready 503 naming recovery, creations 503 with Retry-After
          const onStandby = (e: { sentAt: number; answeredAt: number }) =>
            e.sentAt >= run.fault.at + 500 && e.answeredAt <= run.fault.at + onStandbyMs
          const ready = run.probes.filter(onStandby)
          expect(ready.length).toBeGreaterThan(0)
          expect
            .soft(
              ready
                .filter((p) => !(p.status === 503 && JSON.stringify(p.body).includes("in recovery")))
                .map((p) => JSON.stringify(p.body)),
              "/ready on the standby"
            )
            .toEqual([])
          const creations = run.results.filter(onStandby)
          expect(creations.length).toBeGreaterThan(0)
          expect
            .soft(
              creations
                .filter(
                  (r) =>
                    !(r.status === 503 && r.body?.error?.code === "service_unavailable" && Number(r.retryAfter) > 0)
                )
                .map((r) => `${r.op.key}: ${r.status}`),
              "creations on the standby"
            )
            .toEqual([])
        }
        await failsOverCleanly(c)(run)
      })
  )
})

describe("negative control: asynchronous replication, a standby cut off, then kill -9 of the primary", () => {
  const c: Case = {
    name: "negative control (asynchronous, standby cut off)",
    digit: 4,
    synchronous: false,
    fault: cutOffThenCrash
  }
  it("the checker finds the acknowledged writes that were lost, and the destinations then submitted twice", () =>
    runCase(c, async (run) => {
      const acknowledgedAfterCut = run.results.filter(
        (r) => (r.status === 201 || r.status === 202) && r.sentAt >= run.fault.cutAt! && r.answeredAt <= run.fault.at
      )
      expect(
        acknowledgedAfterCut.length,
        "creations acknowledged while the standby was cut off"
      ).toBeGreaterThanOrEqual(acknowledgedWhileCutOff)
      const lost = acknowledgedProblems(run.results, (await readFacts(run.url)).messages)
      expect(lost.length, "acknowledged creations the checker finds lost").toBeGreaterThan(0)
      // their keys are lost too: a replay admits and submits them again
      const replays = await replayAll(run, run.results)
      const taken = takenMessages(smscDir).filter((t) => ofDigit(c.digit)(t.to))
      const twice = submissionProblems(taken, (await readFacts(run.url)).messages, ofDigit(c.digit))
      expect(twice.length, "destinations the checker finds submitted twice").toBeGreaterThan(0)
      printFigures(`failover ${c.name}`, {
        ...gapFigures(run),
        acknowledged_while_cut_off: acknowledgedAfterCut.length,
        lost_acknowledged_found: lost.length,
        submission_problems_found: twice.length,
        replays_by_status: byStatus(replays),
        case_s: seconds(Date.now() - run.startedAt)
      })
    }))
})
