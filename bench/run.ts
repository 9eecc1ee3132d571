/**
 * `npm run bench [-- --smoke] [--only=1,6] [--drain=N] [--fair-seed=sql] [--fair-backlog=N] [--fair-window=S] [--opt-outs=N] [--oneapi-block=N] [--cpu-prof]`: creates a fresh database on the
 * DATABASE_URL server, starts the service on it as a separate process, runs the scenarios with
 * their pgbench / graphile-worker baselines in the same run, prints the table and writes
 * bench/results/<ISO date>.json. The database is dropped at the end (kept with BENCH_KEEP_DB=1).
 * Scenario 1 is followed by its variant with opt-outs: its load alternated between an organisation
 * holding `--opt-outs=N` opt-outs (100,000; 2,000 in the smoke run) and one holding none, the first
 * judged against the second (bench/scenarios/optouts.ts). Scenario 17 drains blocks of
 * `--oneapi-block=N` messages (10,000; 500 in the smoke run) alternately through a OneAPI route and
 * an SMPP route of one service (bench/scenarios/oneapi.ts).
 */
import { mkdtempSync } from "node:fs"
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { createOrg, firstLotOf, oneLotGrant } from "./admin.ts"
import { type BenchContext, benchRecipient, type OrgWithLot } from "./context.ts"
import { graphileDrain } from "./graphile.ts"
import { createDatabase, dropDatabase, query, scalar, withDatabase } from "./psql.ts"
import { markdownTable, writeResults } from "./report.ts"
import { type Results, rowsOf } from "./rows.ts"
import { openLoop, scheduledAdmission } from "./scenarios/admission.ts"
import { admissionWithOptOuts, blockOrder, maxOptOutSeed, seedOptOuts } from "./scenarios/optouts.ts"
import { batchAdmission } from "./scenarios/batch.ts"
import { claimBaseline, serviceDrain } from "./scenarios/drain.ts"
import { fairShareInProcess, fairShareSmpp, immediateUnderBacklog } from "./scenarios/fairshare.ts"
import { steadyFlow } from "./scenarios/flow.ts"
import { immediateSend } from "./scenarios/immediate.ts"
import { observedAdmission } from "./scenarios/observability.ts"
import { oneApiDrain } from "./scenarios/oneapi.ts"
import { replay } from "./scenarios/replay.ts"
import { retentionPhase, retentionUnderLoad } from "./scenarios/retention.ts"
import { smppDrain } from "./scenarios/smpp.ts"
import { subscribe, webhookDrain, webhookFlow } from "./scenarios/webhooks.ts"
import { memorySampler, type Service, startService } from "./service.ts"
import { fullSettings, smokeSettings } from "./settings.ts"
import { round } from "./stats.ts"

const args = process.argv.slice(2)
const smoke = args.includes("--smoke")
const cpuProf = args.includes("--cpu-prof")
const onlyArg = args.find((a) => a.startsWith("--only="))
const only = onlyArg === undefined ? undefined : new Set(onlyArg.slice("--only=".length).split(","))
const wanted = (n: string) => only === undefined || only.has(n) || (n === "1" && only.has("2"))
const drainArg = args.find((a) => a.startsWith("--drain="))
const fairSeedText = args.find((a) => a.startsWith("--fair-seed="))?.slice("--fair-seed=".length)
if (fairSeedText !== undefined && fairSeedText !== "sql" && fairSeedText !== "batches") {
  process.stderr.write(`--fair-seed is sql or batches, not ${fairSeedText}\n`)
  process.exit(2)
}
const fairSeedArg: "sql" | "batches" | undefined = fairSeedText
const numberArg = (name: string) => {
  const arg = args.find((a) => a.startsWith(`--${name}=`))
  return arg === undefined ? undefined : Number(arg.slice(name.length + 3))
}
const fairBacklogArg = numberArg("fair-backlog")
const fairWindowArg = numberArg("fair-window")
const optOutsArg = numberArg("opt-outs")
const oneApiBlockArg = numberArg("oneapi-block")
if (oneApiBlockArg !== undefined && !(Number.isInteger(oneApiBlockArg) && oneApiBlockArg >= 1)) {
  process.stderr.write("--oneapi-block is a whole number from 1\n")
  process.exit(2)
}
if (optOutsArg !== undefined && !(Number.isInteger(optOutsArg) && optOutsArg >= 1 && optOutsArg <= maxOptOutSeed)) {
  process.stderr.write(`--opt-outs is a whole number from 1 to ${maxOptOutSeed}\n`)
  process.exit(2)
}
const settings = {
  ...(smoke ? smokeSettings : fullSettings),
  ...(drainArg === undefined ? {} : { drainCount: Number(drainArg.slice("--drain=".length)) }),
  ...(fairSeedArg === undefined ? {} : { fairSeed: fairSeedArg }),
  ...(fairBacklogArg === undefined ? {} : { fairBacklog: fairBacklogArg }),
  ...(fairWindowArg === undefined ? {} : { fairWindowS: fairWindowArg }),
  ...(optOutsArg === undefined ? {} : { optOutSeed: optOutsArg }),
  ...(oneApiBlockArg === undefined ? {} : { oneApiBlock: oneApiBlockArg })
}

const adminUrl = process.env["DATABASE_URL"]
if (adminUrl === undefined || adminUrl === "") {
  process.stderr.write("npm run bench needs DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/postgres\n")
  process.exit(2)
}

const log = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`)
const startedAt = new Date()
const loadAtStart = loadavg().map((x) => round(x, 2))
const t0 = performance.now()
const durations: Record<string, number> = {}

/** Runs one phase, timing it and (for service phases) sampling the service's peak RSS. */
const phase = async <A>(
  name: string,
  body: () => Promise<A>,
  service?: Service,
  memory?: Record<string, number>
): Promise<A> => {
  log(`${name}...`)
  const started = performance.now()
  const sampler = service === undefined ? undefined : memorySampler(service.pid)
  try {
    return await body()
  } finally {
    const mb = sampler?.stop()
    if (mb !== undefined && memory !== undefined) memory[name] = mb
    durations[name] = round((performance.now() - started) / 1000, 1)
  }
}

const dbName = `sms_bench_${Date.now()}_${process.pid}`
const url = withDatabase(adminUrl, dbName)
const logDir = mkdtempSync(join(tmpdir(), "sms-bench-"))
const results: Results = { memory: {} }
let service: Service | undefined

await createDatabase(adminUrl, dbName)
// BENCH_AUTO_EXPLAIN_MS=n: every statement of the bench's database that runs n ms or more has its
// plan written to the server's log, with its row counts and buffers (auto_explain; no timing)
const autoExplainMs = process.env["BENCH_AUTO_EXPLAIN_MS"]
if (autoExplainMs !== undefined && autoExplainMs !== "") {
  await query(adminUrl, `ALTER DATABASE ${dbName} SET session_preload_libraries = 'auto_explain'`)
  for (const [name, value] of [
    ["log_min_duration", `${Number(autoExplainMs)}ms`],
    ["log_analyze", "on"],
    ["log_timing", "off"],
    ["log_buffers", "on"],
    ["log_nested_statements", "on"]
  ]) {
    await query(adminUrl, `ALTER DATABASE ${dbName} SET auto_explain.${name} = '${value}'`)
  }
}
const autovacuum = (await scalar(adminUrl, "SHOW autovacuum")) === "on"
if (!autovacuum) log("autovacuum is off on this server: VACUUM ANALYZE before each phase stands in for it")
/**
 * With autovacuum off, every phase starts from vacuumed tables and fresh statistics, as autovacuum
 * would leave them. Every phase also starts from a checkpoint of its own: after a checkpoint, the
 * first write of each page carries the whole page into the WAL, so a phase in which a checkpoint
 * happens to start (one starts at each ~540 MB of WAL with the default max_wal_size, about once
 * per run of scenario 6, and at a point of it that moves from run to run) pays up to 1.7 times
 * the PostgreSQL CPU per message of the same phase without one (bench/HISTORY.md). The phases
 * of one ratio then compare like with like.
 */
const tidy = async () => {
  // BENCH_NO_TIDY=1: neither, as on a fresh database of a server without autovacuum, whose
  // planner has never seen statistics (how issue 39's clumps were first reproduced)
  if (process.env["BENCH_NO_TIDY"] === "1") return
  if (!autovacuum) await query(url, "VACUUM ANALYZE")
  await query(url, "CHECKPOINT")
}
try {
  service = await phase("start service", () =>
    startService({
      databaseUrl: url,
      logDir,
      ...(cpuProf ? { nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${join(import.meta.dirname, "results")}`] } : {})
    })
  )
  const running = service
  /**
   * An organisation whose credits are one lot, granted straight in the tables: the seeds of
   * scenarios 6, 9, 11-12 and 16 write their reservations into that one lot (a grant through the
   * operator API is split into several lots, see `splitGrant`).
   */
  const withLot = async (name: string, credits: number, extra: ReadonlyArray<string> = []): Promise<OrgWithLot> => {
    const org = await createOrg(running, name, 0, extra)
    return { ...org, lot: await scalar(url, oneLotGrant(org.id, credits)) }
  }
  /** An organisation granted its credits through the operator API, as an integrator's are (several lots). */
  const withGrant = async (name: string, credits: number): Promise<OrgWithLot> => {
    const org = await createOrg(running, name, credits)
    return { ...org, lot: await scalar(url, firstLotOf(org.id)) }
  }
  const ctx: BenchContext = {
    settings,
    url,
    service: running,
    org: await withGrant("bench http", 1_000_000_000),
    pgOrg: await withGrant("bench pgbench", 1_000_000_000),
    drainOrg: await withLot("bench drain", 2 * settings.drainCount + 10),
    runId: `bench-${Date.now().toString(36)}`
  }
  const flowOrg = await withLot("bench flow", settings.flowRate * settings.flowDurationS + 10)
  const smppOrg = await withLot("bench smpp", settings.drainCount + 10)
  const fairA = await withLot("bench fair A", 3 * settings.fairBacklog + 10)
  const fairB = await withLot("bench fair B", 2 * settings.fairWindowS + 10)
  const oneApiOrg = wanted("17") ? await withLot("bench oneapi", 8 * settings.oneApiBlock + 10) : undefined
  const retentionOrg = wanted("16") ? await withLot("bench retention", settings.retentionSeed + 10) : undefined
  // granted as scenario 1's organisation is (several lots)
  const optOutOrgs = wanted("1")
    ? {
        empty: await withGrant("bench no opt-outs", 1_000_000_000),
        full: await withGrant("bench opt-outs", 1_000_000_000)
      }
    : undefined
  const mem = results.memory
  await tidy()
  if (wanted("1")) results.s1 = await phase("scheduled admission", () => scheduledAdmission(ctx), running, mem)
  if (optOutOrgs !== undefined) {
    const seedS = await phase("seed opt-outs", () => seedOptOuts(ctx, optOutOrgs.full))
    log(`seeded ${settings.optOutSeed} opt-outs in ${seedS} s`)
    await tidy()
    results.s1OptOuts = await phase(
      "scheduled admission with and without opt-outs",
      () => admissionWithOptOuts(ctx, optOutOrgs, seedS),
      running,
      mem
    )
  }
  if (wanted("2") && results.s1 !== undefined) {
    const rate = Math.max(1, Math.round(results.s1.service.reqPerSec / 2))
    await tidy()
    results.s2 = await phase("open loop", () => openLoop(ctx, rate), running, mem)
  }
  if (wanted("3")) await tidy()
  if (wanted("3")) results.s3 = await phase("immediate send", () => immediateSend(ctx), running, mem)
  if (wanted("4")) await tidy()
  if (wanted("4")) results.s4 = await phase("idempotent replay", () => replay(ctx), running, mem)
  if (wanted("5")) await tidy()
  if (wanted("5")) results.s5 = await phase("batch admission", () => batchAdmission(ctx), running, mem)
  results.leftProcessing = Number(
    await scalar(
      url,
      `SELECT count(*) FROM messages
    WHERE organisation_id = '${ctx.org.id}' AND status = 'processing' AND updated_at < now() - interval '2 seconds'`
    )
  )
  if (results.leftProcessing > 0)
    log(`${results.leftProcessing} HTTP-created message(s) left in processing (client hang-up after admission?)`)
  if (wanted("6")) {
    await tidy()
    const drained = await phase("dispatcher drain", () => serviceDrain(ctx), running, mem)
    results.s6 = { service: drained }
  }
  if (wanted("14")) {
    const hookOrg = await withLot("bench webhooks flow", settings.flowRate * settings.flowDurationS + 10, [
      "webhooks.manage"
    ])
    const receiver = await subscribe(running, hookOrg.apiKey)
    await tidy()
    results.s14 = await phase(
      "webhooks while messages flow",
      () => webhookFlow(ctx, hookOrg, receiver),
      running,
      mem
    ).finally(() => receiver.close())
  }
  if (wanted("15")) {
    // scenario 6 without webhooks in the same run, when it was not asked for
    if (results.s6 === undefined) {
      await tidy()
      results.s6 = { service: await phase("dispatcher drain", () => serviceDrain(ctx), running, mem) }
    }
    const hookOrg = await withLot("bench webhooks drain", settings.drainCount + 10, ["webhooks.manage"])
    const receiver = await subscribe(running, hookOrg.apiKey)
    await tidy()
    results.s15 = await phase(
      "dispatcher drain with webhooks",
      () => webhookDrain(ctx, hookOrg, receiver),
      running,
      mem
    ).finally(() => receiver.close())
  }
  if (wanted("8")) {
    await tidy()
    results.s8 = await phase("steady flow", () => steadyFlow(ctx, flowOrg), running, mem)
  }
  if (wanted("11")) {
    await tidy()
    results.s11 = await phase("fair share, in-process", () => fairShareInProcess(ctx, fairA, fairB), running, mem)
  }
  if (wanted("13")) {
    await tidy()
    results.s13 = await phase("immediate sends under a backlog", () => immediateUnderBacklog(ctx, fairA), running, mem)
  }
  await phase("stop service", () => running.stop())
  service = undefined
  if (wanted("9")) {
    await tidy()
    results.s9 = await phase("SMPP drain", () => smppDrain(ctx, smppOrg, logDir, mem))
  }
  if (wanted("12")) {
    await tidy()
    results.s12 = await phase("fair share through SMPP", () => fairShareSmpp(ctx, fairA, fairB, logDir, mem))
  }
  if (oneApiOrg !== undefined) {
    await tidy()
    results.s17 = await phase("drain through OneAPI and SMPP", () =>
      oneApiDrain(
        ctx,
        oneApiOrg,
        logDir,
        mem,
        log,
        cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${join(import.meta.dirname, "results")}`] : []
      )
    )
  }
  if (wanted("10") && results.s1 !== undefined) {
    await tidy()
    results.s10 = await phase("admission with tracing and metrics", () => observedAdmission(ctx, ctx.org, logDir, mem))
  }
  if (retentionOrg !== undefined) {
    await tidy()
    results.s16 = await phase(retentionPhase, () => retentionUnderLoad(ctx, retentionOrg, logDir, mem, log))
  }
  if (results.s6 !== undefined) {
    await tidy()
    const claim = await phase("claim SQL drain (pgbench)", () => claimBaseline(ctx))
    await tidy()
    const graphile = await phase("graphile-worker drain", () => graphileDrain(url, settings.drainCount))
    results.s6 = { ...results.s6, claim, graphile }
  }
} finally {
  if (service !== undefined) await service.stop()
  if (process.env["BENCH_KEEP_DB"] === "1") log(`kept database ${dbName} (BENCH_KEEP_DB=1)`)
  else await dropDatabase(adminUrl, dbName)
}

const rows = rowsOf(results, settings.connections, settings.batchConnections)
const totalS = round((performance.now() - t0) / 1000, 1)
const pgVersion = (await query(adminUrl, "SHOW server_version"))[0]?.[0] ?? "?"
const machine = {
  nproc: availableParallelism(),
  cpu: cpus()[0]?.model ?? "?",
  memoryGB: round(totalmem() / 1024 ** 3, 1),
  postgres: pgVersion,
  node: process.version,
  autovacuum,
  /** Other work on the machine skews every figure: the 1/5/15-minute load averages at start and end. */
  loadavgStart: loadAtStart,
  loadavgEnd: loadavg().map((x) => round(x, 2))
}
const shownUrl = new URL(adminUrl)
if (shownUrl.password !== "") shownUrl.password = "***"
const command = `DATABASE_URL=${shownUrl.toString()} npm run bench${args.length > 0 ? ` -- ${args.join(" ")}` : ""}`
const file = writeResults(startedAt, smoke, {
  startedAt: startedAt.toISOString(),
  command,
  machine,
  settings,
  durations,
  totalS,
  rows,
  results
})
// The harness itself must have worked (targets missed are results, not failures): every load
// phase got expected answers and the drain finished.
const loads = [
  results.s1?.service,
  results.s1OptOuts?.without,
  results.s1OptOuts?.with,
  results.s2?.service,
  results.s3,
  results.s4,
  results.s5?.service,
  results.s13,
  results.s16?.idle,
  results.s16?.erasing
]
const broken = [
  ...loads.flatMap((l) =>
    l !== undefined && l.ok === 0 ? [`a ${l.tool} phase got no expected answer: ${JSON.stringify(l.statusCounts)}`] : []
  ),
  ...(results.s1OptOuts !== undefined && results.s1OptOuts.refused > 0
    ? [
        `scenario 1 with opt-outs had ${results.s1OptOuts.refused} answer(s) other than 202: ${JSON.stringify(results.s1OptOuts.with.statusCounts)} with, ${JSON.stringify(results.s1OptOuts.without.statusCounts)} without`
      ]
    : []),
  ...(results.s6 !== undefined && !results.s6.service.complete ? ["the dispatcher drain did not finish in time"] : []),
  ...(results.s9 !== undefined && !results.s9.complete ? ["the SMPP drain did not finish in time"] : []),
  ...(results.s17 !== undefined && !results.s17.complete
    ? [
        `a block of the drain through OneAPI and SMPP did not end delivered in time: ${results.s17.blocks.map((b) => `${b.route} ${JSON.stringify(b.statuses)}`).join(", ")}`
      ]
    : []),
  ...(results.s15 !== undefined && !results.s15.drain.complete
    ? ["the drain with webhooks did not finish in time"]
    : []),
  ...(results.s10 !== undefined && results.s10.service.ok === 0
    ? ["the observed admission got no expected answer"]
    : [])
]
const table = markdownTable(rows)
const notes = [
  ...(results.s1OptOuts === undefined
    ? []
    : [
        `scenario 1 with opt-outs: scenario 1's load (15 requests in 16 to ${benchRecipient}, 1 in 16 to 16 numbers lying among the opted-out ones, none of them opted out) on an organisation holding ${results.s1OptOuts.seeded} opt-outs (f, seeded with SQL in ${results.s1OptOuts.seedS} s) and on one holding none (e), in blocks of ${results.s1OptOuts.blockS} s in the order ${blockOrder}; req/s and p99 of f's blocks pooled as ratios to e's; lookups: scans of the list's key per idempotency key inserted. Blocks (req/s, p99 ms): ${results.s1OptOuts.blocks.map((b) => `${b.org} ${b.reqPerSec} ${b.p99Ms}`).join(", ")}`
      ]),
  ...(results.s17 === undefined
    ? []
    : [
        `scenario 17: blocks of ${results.s17.blockSize} in the order ${results.s17.order} (s SMPP, o OneAPI), each admitted as batches of 1000 and drained to its last receipt; msgs/s and CPU ms per 1000 (service, PostgreSQL, simulator) pooled by side. SMPP ${results.s17.smpp.messagesPerSec}/s, ${results.s17.smpp.serviceCpuMsPer1000}/${results.s17.smpp.postgresCpuMsPer1000}/${results.s17.smpp.simulatorCpuMsPer1000} ms; OneAPI ${results.s17.oneapi.messagesPerSec}/s, ${results.s17.oneapi.serviceCpuMsPer1000}/${results.s17.oneapi.postgresCpuMsPer1000}/${results.s17.oneapi.simulatorCpuMsPer1000} ms. Blocks (msgs/s, service CPU s): ${results.s17.blocks.map((b) => `${b.route} ${b.messagesPerSec} ${b.serviceCpuS}`).join(", ")}`
      ])
]
for (const line of broken) log(`FAILED: ${line}`)
if (broken.length > 0) process.exitCode = 1
process.stdout.write(
  `\n${table}\n${notes.map((n) => `\n${n}`).join("")}\n\nmachine: ${JSON.stringify(machine)}\ndurations (s): ${JSON.stringify(durations)}\ntotal: ${totalS} s\nresults: ${file}\nservice logs: ${logDir}\n`
)
