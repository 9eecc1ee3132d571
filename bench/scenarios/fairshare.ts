/**
 * Scenarios 11-13, sharing the dispatcher fairly (docs/decisions.md#fair-share-and-fleet-limits):
 * - 11: organisation A has a backlog due at once (100,000 in the full run), organisation B one
 *   message due each second while A drains; B's lag (its timeline's move to `processing` minus
 *   its `send_at`), p99 and maximum, in-process simulator.
 * - 12: the same through SMPP to the SMSC simulator with `mps` 200 (a service process of its
 *   own): B's lag and A's rate against the cap, over the measured window.
 * - 13: immediate sends at 20/s while a backlog drains: their p99, in-process simulator.
 * A's backlog is admitted through the API as batches of 1000 due at one instant, as an
 * integrator's campaign is (`--fair-seed=sql` writes it with SQL instead, as before issue 39:
 * messages of no batch, freshly analysed). It is measured over a window, not drained to the end;
 * what is left of it is moved out of the way (due in 2999) so that later scenarios start from
 * an idle dispatcher.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { batchesPath, type BenchContext, jsonHeaders, messagesPath, type OrgWithLot } from "../context.ts"
import { type LoadResult, pacedLoad } from "../load.ts"
import { query, scalar } from "../psql.ts"
import { memorySampler, startService } from "../service.ts"
import { startSmsc } from "../simulators.ts"
import { round } from "../stats.ts"
import { unpackedEntries } from "../../src/messages/CompactTimeline.ts"
import { seed } from "./drain.ts"

/** How A's backlog is written: through the API as batches of `batchSize` (the default), or with SQL (`--fair-seed=sql`). */
export type BacklogSeed = "batches" | "sql"

export interface FairShareFacts {
  readonly backlog: number
  readonly seededBy: BacklogSeed
  /** Seconds A's backlog took to write. */
  readonly seedS: number
  readonly windowS: number
  /** B's messages due in the window, and how many were handed over in it. */
  readonly bDue: number
  readonly bHandedOver: number
  /** B's lag: its timeline's move to `processing` minus its `send_at` (now when not yet moved), seconds. */
  readonly bLagP99S: number
  readonly bLagMaxS: number
  /** Each of B's lags in the order they fell due, seconds (where the clumps show). */
  readonly bLagsS: ReadonlyArray<number>
  /** A's messages handed over per second over the window (after its first seconds). */
  readonly aPerSec: number
}

/** Seconds before A's backlog falls due, leaving time to seed it and to schedule B's messages. */
const leadS = (backlog: number, how: BacklogSeed) => 5 + Math.ceil(backlog / (how === "sql" ? 10_000 : 2_000))

const recipient = (i: number) => `+26133${String(i).padStart(7, "0")}`

/**
 * Admits `n` messages of `org` due at `due` through the API, as batches of `batchSize` (distinct
 * recipients throughout, `to(1)`, `to(2)`...), over 2 connections as scenario 5 does.
 */
export const admitBatches = async (
  ctx: BenchContext,
  org: OrgWithLot,
  n: number,
  due: string,
  tag: string,
  to: (i: number) => string = recipient
) => {
  const { batchSize } = ctx.settings
  const batches = Math.ceil(n / batchSize)
  let next = 0
  const connection = async () => {
    while (next < batches) {
      const b = next++
      const size = Math.min(batchSize, n - b * batchSize)
      const res = await fetch(`${ctx.service.base}${batchesPath}`, {
        method: "POST",
        headers: { ...jsonHeaders(org), "idempotency-key": `${ctx.runId}-${tag}-${due}-${b}` },
        body: JSON.stringify({
          recipients: Array.from({ length: size }, (_, k) => to(b * batchSize + k + 1)),
          text: "Bench fair-share batch",
          send_at: due
        })
      })
      if (res.status !== 202) throw new Error(`admitting A's batch ${b}: ${res.status} ${await res.text()}`)
    }
  }
  await Promise.all([connection(), connection()])
}

/** Writes A's backlog of `n` due at one instant, `how` says how; the instant and how long writing it took. */
const seedBacklog = async (
  ctx: BenchContext,
  org: OrgWithLot,
  n: number,
  tag: string
): Promise<{ due: string; seedS: number }> => {
  const how = ctx.settings.fairSeed
  if (how === "sql") return seed(ctx.url, org, n, leadS(n, how))
  const due = new Date(Date.now() + leadS(n, how) * 1000).toISOString()
  const started = performance.now()
  await admitBatches(ctx, org, n, due, tag)
  const seedS = (performance.now() - started) / 1000
  if (Date.now() > Date.parse(due))
    process.stderr.write(`warning: admitting A's batches took ${seedS.toFixed(1)} s, past the due time\n`)
  return { due, seedS }
}

/** Schedules one message of `org` due each second from `firstDue`, for `count` seconds, through the API. */
const scheduleEachSecond = async (ctx: BenchContext, org: OrgWithLot, firstDue: number, count: number) => {
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${ctx.service.base}${messagesPath}`, {
      method: "POST",
      headers: { ...jsonHeaders(org), "idempotency-key": `${ctx.runId}-fair-${firstDue}-${i}` },
      body: JSON.stringify({
        to: "+261331234567",
        text: "Bench fair-share message",
        send_at: new Date(firstDue + i * 1000).toISOString()
      })
    })
    if (res.status !== 202) throw new Error(`scheduling B's message ${i}: ${res.status} ${await res.text()}`)
  }
}

/**
 * Moves what is left of `org`'s backlog out of the way of the next scenario. The dispatcher is
 * still claiming: rows it holds are skipped (never waited for: a plain UPDATE deadlocked with a
 * claim), and it moves them out of `scheduled` itself; a few passes take the rows it gives back.
 */
const parkRest = async (url: string, org: OrgWithLot) => {
  for (let pass = 0; pass < 10; pass++) {
    const left = await scalar(
      url,
      `WITH s AS (SELECT organisation_id, id FROM messages
        WHERE organisation_id = '${org.id}' AND status = 'scheduled' AND due_at < '2999-01-01' FOR UPDATE SKIP LOCKED),
      u AS (UPDATE messages AS m SET due_at = '2999-01-01' FROM s WHERE m.organisation_id = s.organisation_id AND m.id = s.id RETURNING 1)
      SELECT (SELECT count(*) FROM messages WHERE organisation_id = '${org.id}' AND status = 'scheduled' AND due_at < '2999-01-01')
        - (SELECT count(*) FROM u) AS left`
    )
    if (Number(left) <= 0) return
    await sleep(200)
  }
}

/** When the message `m` moved to `processing` (its timeline's entry), as an SQL expression. */
const processingAt = `(SELECT min(e.at) FROM (${unpackedEntries("m.timeline")}) AS e WHERE e.to_status = 'processing')`

const measure = async (
  url: string,
  a: OrgWithLot,
  b: OrgWithLot,
  due: string,
  windowS: number,
  backlog: number,
  seeded: { readonly by: BacklogSeed; readonly seedS: number }
): Promise<FairShareFacts> => {
  const [bRow] = await query(
    url,
    `WITH b AS (
      SELECT extract(epoch FROM coalesce(${processingAt}, now()) - m.send_at) AS lag, ${processingAt} IS NOT NULL AS handed, m.send_at
      FROM messages AS m WHERE m.organisation_id = '${b.id}' AND m.send_at > '${due}'::timestamptz
        AND m.send_at <= '${due}'::timestamptz + make_interval(secs => ${windowS}))
    SELECT count(*), count(*) FILTER (WHERE handed), percentile_cont(0.99) WITHIN GROUP (ORDER BY lag), max(lag),
      string_agg(round(lag::numeric, 3)::text, ',' ORDER BY send_at)
    FROM b`
  )
  // A's rate once the pipeline runs: from the 2nd second of the window to its end
  const [aRow] = await query(
    url,
    `SELECT count(*) FROM messages WHERE organisation_id = '${a.id}'
    AND submitted_at >= '${due}'::timestamptz + interval '2 seconds'
    AND submitted_at < '${due}'::timestamptz + make_interval(secs => ${windowS})`
  )
  return {
    backlog,
    seededBy: seeded.by,
    seedS: round(seeded.seedS, 2),
    windowS,
    bDue: Number(bRow![0]),
    bHandedOver: Number(bRow![1]),
    bLagP99S: round(Number(bRow![2]), 3),
    bLagMaxS: round(Number(bRow![3]), 3),
    bLagsS: (bRow![4] ?? "")
      .split(",")
      .filter((x) => x !== "")
      .map(Number),
    aPerSec: round(Number(aRow![0]) / (windowS - 2), 1)
  }
}

/** A's backlog and B's one message a second, on the running service `ctx.service`. */
const backlogAndTrickle = async (ctx: BenchContext, a: OrgWithLot, b: OrgWithLot): Promise<FairShareFacts> => {
  const { fairBacklog: backlog, fairWindowS: windowS } = ctx.settings
  const { due, seedS } = await seedBacklog(ctx, a, backlog, "fair")
  // B's first message a second after A's backlog fell due, or, when seeding ran past that (a
  // loaded machine), as soon as it can still be scheduled
  await scheduleEachSecond(ctx, b, Math.max(Date.parse(due) + 1000, Date.now() + 2000), windowS - 1)
  await sleep(Math.max(0, Date.parse(due) + windowS * 1000 + 1000 - Date.now()))
  const facts = await measure(ctx.url, a, b, due, windowS, backlog, { by: ctx.settings.fairSeed, seedS })
  await parkRest(ctx.url, a)
  return facts
}

/** Scenario 11: on the in-process simulator of the running service. */
export const fairShareInProcess = (ctx: BenchContext, a: OrgWithLot, b: OrgWithLot) => backlogAndTrickle(ctx, a, b)

export const fairShareMps = 200

/** Scenario 12: through SMPP to the SMSC simulator capped at `fairShareMps` (the main service is stopped). */
export const fairShareSmpp = async (
  ctx: BenchContext,
  a: OrgWithLot,
  b: OrgWithLot,
  logDir: string,
  memory: Record<string, number>
) => {
  const smsc = await startSmsc(logDir)
  try {
    const service = await startService({
      databaseUrl: ctx.url,
      logDir,
      env: { SMS_PROVIDER: "smpp", SMS_SMPP_URL: smsc.url, SMS_SMPP_MPS: String(fairShareMps) }
    })
    const sampler = memorySampler(service.pid)
    try {
      return await backlogAndTrickle({ ...ctx, service }, a, b)
    } finally {
      memory["fair share through SMPP"] = sampler.stop()
      await service.stop()
    }
  } finally {
    await smsc.stop()
  }
}

/** Scenario 13: immediate sends at 20/s while `a`'s backlog drains. */
export const immediateUnderBacklog = async (ctx: BenchContext, a: OrgWithLot): Promise<LoadResult> => {
  const { fairBacklog: backlog, durationS } = ctx.settings
  const { due } = await seedBacklog(ctx, a, backlog, "s13")
  await sleep(Math.max(0, Date.parse(due) + 1000 - Date.now()))
  const result = await pacedLoad({
    base: ctx.service.base,
    connections: 8,
    durationS,
    rate: 20,
    request: {
      method: "POST",
      path: messagesPath,
      headers: jsonHeaders(ctx.org),
      body: JSON.stringify({ to: "+261331234567", text: "Bench immediate under a backlog" }),
      uniqueKeyPrefix: `${ctx.runId}-s13`
    },
    expectedStatus: 201
  })
  await parkRest(ctx.url, a)
  return result
}
