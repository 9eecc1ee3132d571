/**
 * Scenario 6: due scheduled messages seeded with SQL (each with its admission event and pending
 * hold), drained by the service's dispatcher to the zero-delay simulator; then, with the service
 * stopped, the same number drained by pgbench replaying the claim SQL alone.
 */
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { unpackedEntries } from "../../src/messages/CompactTimeline.ts"
import type { BenchContext, OrgWithLot } from "../context.ts"
import { cpuSampler, type CpuSeconds } from "../cpu.ts"
import { type PgbenchResult, runPgbench } from "../pgbench.ts"
import { query, runFile, scalar } from "../psql.ts"
import { round } from "../stats.ts"

export interface DrainFacts {
  readonly count: number
  readonly seedS: number
  /** Seconds from falling due to the last settlement (service) or the last claim (claim SQL). */
  readonly drainS: number
  readonly messagesPerSec: number
  /** submitted_at - due_at, seconds. */
  readonly lagP50S: number
  readonly lagP99S: number
  readonly statuses: Readonly<Record<string, number>>
  readonly complete: boolean
  /** CPU spent from the end of seeding to the end of the drain (service process and database backends). */
  readonly cpu?: CpuSeconds
}

const databaseOf = (url: string) => new URL(url).pathname.slice(1)

/** Seeds `n` due messages of `org`, the first due in `dueInS`, each next one `stepUs` later (0: all at once). */
export const seed = async (
  url: string,
  org: OrgWithLot,
  n: number,
  dueInS: number,
  stepUs = 0
): Promise<{ due: string; seedS: number }> => {
  const due = new Date(Date.now() + dueInS * 1000).toISOString()
  const started = performance.now()
  await runFile(url, join(import.meta.dirname, "..", "sql", "seed-due.sql"), {
    org: org.id,
    lot: org.lot,
    n,
    due,
    step_us: stepUs
  })
  const seedS = (performance.now() - started) / 1000
  if (Date.now() > Date.parse(due))
    process.stderr.write(`warning: seeding took ${seedS.toFixed(1)} s, past the due time\n`)
  return { due, seedS }
}

/**
 * Whether a seeded message is not yet settled (still scheduled, or claimed and not yet answered by
 * the provider). The backends of the bench's database are part of the drain's CPU figure, so the
 * poll only looks for one such row: a count of the backlog read up to 100,000 index entries four
 * times a second, about a tenth of the PostgreSQL CPU the figure gave the service.
 */
const pending = async (url: string, org: OrgWithLot, due: string) =>
  (await scalar(
    url,
    `SELECT EXISTS (SELECT 1 FROM messages WHERE status = 'scheduled' AND due_at <= '${due}')
    OR EXISTS (SELECT 1 FROM messages WHERE status = 'processing' AND organisation_id = '${org.id}' AND due_at = '${due}')`
  )) === "t"

/** When the last seeded message was settled on the provider's answer (its timeline's `provider` entry). */
const settledEnd = (org: OrgWithLot, due: string) => `(SELECT max(e.at) FROM messages AS m
  CROSS JOIN LATERAL (${unpackedEntries("m.timeline")}) AS e
  WHERE m.organisation_id = '${org.id}' AND m.due_at = '${due}' AND e.source = 'provider')`

const facts = async (
  url: string,
  org: OrgWithLot,
  due: string,
  seedS: number,
  end: "settled" | "claimed"
): Promise<DrainFacts> => {
  const [row] = await query(
    url,
    `SELECT count(*),
      extract(epoch FROM ${end === "settled" ? settledEnd(org, due) : "max(submitted_at)"} - '${due}'::timestamptz),
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM submitted_at - due_at)),
      percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM submitted_at - due_at))
    FROM messages WHERE organisation_id = '${org.id}' AND due_at = '${due}'`
  )
  const statusRows = await query(
    url,
    `SELECT status, count(*) FROM messages
    WHERE organisation_id = '${org.id}' AND due_at = '${due}' GROUP BY status ORDER BY status`
  )
  const statuses = Object.fromEntries(statusRows.map(([s, n]) => [s!, Number(n)]))
  const count = Number(row![0])
  const drainS = Number(row![1])
  return {
    count,
    seedS: round(seedS, 2),
    drainS: round(drainS, 2),
    messagesPerSec: round(count / drainS, 1),
    lagP50S: round(Number(row![2]), 3),
    lagP99S: round(Number(row![3]), 3),
    statuses,
    complete: (statuses["scheduled"] ?? 0) === 0 && (statuses["processing"] ?? 0) === 0
  }
}

/** Seeds due messages of `org` and waits until the running service has dispatched and settled them all. */
export const serviceDrain = async (ctx: BenchContext, org: OrgWithLot = ctx.drainOrg): Promise<DrainFacts> => {
  const { drainCount, drainDueInS, drainTimeoutS } = ctx.settings
  const { due, seedS } = await seed(ctx.url, org, drainCount, drainDueInS)
  const cpu = cpuSampler(databaseOf(ctx.url), ctx.service.pid)
  const deadline = Date.parse(due) + drainTimeoutS * 1000
  await sleep(Math.max(0, Date.parse(due) - Date.now()))
  while (Date.now() < deadline && (await pending(ctx.url, org, due))) await sleep(250)
  return { ...(await facts(ctx.url, org, due, seedS, "settled")), cpu: cpu.stop() }
}

export interface ClaimResult {
  readonly pgbench: PgbenchResult
  readonly messagesPerSec: number
  readonly drain: DrainFacts
}

/** With the service stopped: seeds as many due messages and claims them all with pgbench (one client, like the dispatcher's one claim loop). */
export const claimBaseline = async (ctx: BenchContext): Promise<ClaimResult> => {
  const { drainCount, drainDueInS } = ctx.settings
  const { due, seedS } = await seed(ctx.url, ctx.drainOrg, drainCount, drainDueInS)
  await sleep(Math.max(0, Date.parse(due) - Date.now()))
  const cpu = cpuSampler(databaseOf(ctx.url))
  const pgbench = await runPgbench({
    url: ctx.url,
    script: "claim",
    vars: { worker: crypto.randomUUID() },
    clients: 1,
    transactions: Math.ceil(drainCount / 100)
  })
  const drain = { ...(await facts(ctx.url, ctx.drainOrg, due, seedS, "claimed")), cpu: cpu.stop() }
  return { pgbench, messagesPerSec: round(pgbench.tps * 100, 1), drain }
}
