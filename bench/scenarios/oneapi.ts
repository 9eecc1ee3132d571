/**
 * Scenario 17: the same backlog drained through a OneAPI route (docs/operators.md#oneapi-routes)
 * and through an SMPP route, in one service process whose routing file holds both: an SMSC
 * entry for `+26133` bound to the SMSC simulator and a `"type": "oneapi"` entry for `+26132`
 * on the OneAPI simulator (docs/operators.md#the-oneapi-simulator), separate processes with zero
 * delays, neither route capped (`mps` 0). Each block admits `oneApiBlock` messages through the
 * API as batches of 1000 due at one instant, to the one route's numbers, then waits until every
 * one is settled and its receipt applied; the blocks alternate in the order `blockOrder` (s:
 * SMPP, o: OneAPI) so that a drift of the machine's load reaches both sides alike. Each side's
 * blocks are pooled: messages over the seconds from falling due to the last provider answer, and
 * CPU milliseconds per 1000 messages of the service process (and of the database's backends and
 * of the simulator), from falling due until the last receipt is applied.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { unpackedEntries } from "../../src/messages/CompactTimeline.ts"
import type { BenchContext, OrgWithLot } from "../context.ts"
import { cpuSampler, processSeconds } from "../cpu.ts"
import { startOneApi, startSmsc } from "../simulators.ts"
import { query, scalar } from "../psql.ts"
import { memorySampler, startService } from "../service.ts"
import { round } from "../stats.ts"
import { admitBatches } from "./fairshare.ts"

/** s: a block through the SMSC simulator, o: through the OneAPI simulator; the smoke run's is shorter. */
export const blockOrder = (mode: "full" | "smoke") => (mode === "full" ? "soossoos" : "soos")

export type RouteKind = "smpp" | "oneapi"

const routeOf = (c: string): RouteKind => (c === "s" ? "smpp" : "oneapi")

/** Each route's numbers: `+26133…` go to the SMSC entry, `+26132…` to the OneAPI entry. */
const prefixOf: Record<RouteKind, string> = { smpp: "+26133", oneapi: "+26132" }

export interface RouteBlock {
  readonly route: RouteKind
  readonly count: number
  readonly admitS: number
  /** From falling due to the last provider answer. */
  readonly drainS: number
  readonly messagesPerSec: number
  /** From falling due to the last receipt applied. */
  readonly receiptsS: number
  readonly serviceCpuS: number
  /** The service's CPU seconds until every message was answered (its receipts mostly to come when they are delayed). */
  readonly answeredCpuS: number
  readonly postgresCpuS: number
  /** The CPU seconds of the simulator the block went through. */
  readonly simulatorCpuS: number
  readonly statuses: Readonly<Record<string, number>>
  readonly complete: boolean
}

export interface RouteSide {
  readonly count: number
  /** Pooled over the side's blocks. */
  readonly messagesPerSec: number
  readonly serviceCpuMsPer1000: number
  readonly postgresCpuMsPer1000: number
  readonly simulatorCpuMsPer1000: number
}

export interface OneApiDrainFacts {
  readonly blockSize: number
  readonly order: string
  readonly blocks: ReadonlyArray<RouteBlock>
  readonly smpp: RouteSide
  readonly oneapi: RouteSide
  /** OneAPI's pooled messages/s over SMPP's. */
  readonly ratio: number
  readonly complete: boolean
}

/** Seconds before a block falls due, leaving time to admit it (about 2,000 a second as batches). */
const leadS = (n: number) => 1 + Math.ceil(n / 1500)

/** Whether a message of the block is still in one of `statuses` (not yet answered, or its receipt not applied). */
const anyIn = async (url: string, org: OrgWithLot, due: string, statuses: string) =>
  (await scalar(
    url,
    `SELECT EXISTS (SELECT 1 FROM messages WHERE organisation_id = '${org.id}' AND due_at = '${due}'
      AND status IN (${statuses}))`
  )) === "t"

/** Seconds from `due` to the last provider answer and to the last change (the receipt), and the statuses. */
const blockFacts = async (url: string, org: OrgWithLot, due: string) => {
  const [row] = await query(
    url,
    `SELECT count(*),
      extract(epoch FROM (SELECT max(e.at) FROM messages AS m CROSS JOIN LATERAL (${unpackedEntries("m.timeline")}) AS e
        WHERE m.organisation_id = '${org.id}' AND m.due_at = '${due}' AND e.source = 'provider') - '${due}'::timestamptz),
      extract(epoch FROM max(updated_at) - '${due}'::timestamptz)
    FROM messages WHERE organisation_id = '${org.id}' AND due_at = '${due}'`
  )
  const statusRows = await query(
    url,
    `SELECT status, count(*) FROM messages WHERE organisation_id = '${org.id}' AND due_at = '${due}' GROUP BY status ORDER BY status`
  )
  return {
    count: Number(row![0]),
    drainS: Number(row![1]),
    receiptsS: Number(row![2]),
    statuses: Object.fromEntries(statusRows.map(([s, n]) => [s!, Number(n)]))
  }
}

const sideOf = (blocks: ReadonlyArray<RouteBlock>): RouteSide => {
  const sum = (f: (b: RouteBlock) => number) => blocks.reduce((a, b) => a + f(b), 0)
  const count = sum((b) => b.count)
  const perThousand = (s: number) => (count > 0 ? round((s * 1000) / (count / 1000), 1) : 0)
  return {
    count,
    messagesPerSec: round(count / sum((b) => b.drainS), 1),
    serviceCpuMsPer1000: perThousand(sum((b) => b.serviceCpuS)),
    postgresCpuMsPer1000: perThousand(sum((b) => b.postgresCpuS)),
    simulatorCpuMsPer1000: perThousand(sum((b) => b.simulatorCpuS))
  }
}

/**
 * Runs the blocks on a service of its own (the main one is stopped); the service's peak RSS goes
 * to `memory` under the phase's name.
 */
export const oneApiDrain = async (
  ctx: BenchContext,
  org: OrgWithLot,
  logDir: string,
  memory: Record<string, number>,
  log: (line: string) => void,
  nodeFlags: ReadonlyArray<string> = []
): Promise<OneApiDrainFacts> => {
  const n = ctx.settings.oneApiBlock
  const { drainTimeoutS } = ctx.settings
  // BENCH_S17_ORDER: another order of blocks for an experiment (`oo` to profile OneAPI alone)
  const order = process.env["BENCH_S17_ORDER"] || blockOrder(ctx.settings.mode)
  const receiptDelayMs = Number(process.env["BENCH_RECEIPT_DELAY_MS"] ?? 0)
  const smsc = await startSmsc(logDir, receiptDelayMs)
  const oneapi = await startOneApi(logDir, receiptDelayMs).catch(async (e: unknown) => {
    await smsc.stop()
    throw e
  })
  try {
    const routesFile = join(logDir, "providers-oneapi-bench.json")
    writeFileSync(
      routesFile,
      JSON.stringify([
        { name: "smsc", smpp_url: smsc.url, prefixes: [prefixOf.smpp], mps: 0 },
        {
          type: "oneapi",
          name: "oneapi",
          base_url: oneapi.baseUrl,
          token_url: oneapi.tokenUrl,
          client_id: oneapi.clientId,
          client_secret: oneapi.clientSecret,
          sender_address: "tel:+2610000",
          prefixes: [prefixOf.oneapi],
          mps: 0
        }
      ])
    )
    const service = await startService({
      databaseUrl: ctx.url,
      logDir,
      env: { SMS_PROVIDER: "smpp", SMS_PROVIDERS_FILE: routesFile },
      nodeFlags
    })
    const sampler = memorySampler(service.pid)
    const database = new URL(ctx.url).pathname.slice(1)
    const blocks: Array<RouteBlock> = []
    try {
      for (const [i, c] of [...order].entries()) {
        const route = routeOf(c)
        const prefix = prefixOf[route]
        const due = new Date(Date.now() + leadS(n) * 1000).toISOString()
        const started = performance.now()
        await admitBatches(
          { ...ctx, service },
          org,
          n,
          due,
          `s17-${i}`,
          (k) => `${prefix}${String(k).padStart(7, "0")}`
        )
        const admitS = (performance.now() - started) / 1000
        if (Date.now() > Date.parse(due))
          log(`warning: admitting block ${i} took ${admitS.toFixed(1)} s, past its due time`)
        await sleep(Math.max(0, Date.parse(due) - Date.now()))
        const simulatorPid = route === "smpp" ? smsc.pid : oneapi.pid
        const simStart = processSeconds(simulatorPid) ?? 0
        const cpu = cpuSampler(database, service.pid)
        const deadline = Date.parse(due) + drainTimeoutS * 1000
        const serviceStart = processSeconds(service.pid) ?? 0
        while (Date.now() < deadline && (await anyIn(ctx.url, org, due, "'scheduled', 'processing'"))) await sleep(250)
        const answeredCpuS = (processSeconds(service.pid) ?? serviceStart) - serviceStart
        while (Date.now() < deadline && (await anyIn(ctx.url, org, due, "'accepted'"))) await sleep(250)
        const used = cpu.stop()
        const simEnd = processSeconds(simulatorPid) ?? simStart
        const f = await blockFacts(ctx.url, org, due)
        const block: RouteBlock = {
          route,
          count: f.count,
          admitS: round(admitS, 2),
          drainS: round(f.drainS, 2),
          messagesPerSec: round(f.count / f.drainS, 1),
          receiptsS: round(f.receiptsS, 2),
          serviceCpuS: used.serviceS,
          answeredCpuS: round(answeredCpuS, 2),
          postgresCpuS: used.postgresS,
          simulatorCpuS: round(simEnd - simStart, 2),
          statuses: f.statuses,
          complete: f.count === n && f.statuses["delivered"] === n
        }
        log(
          `block ${i} ${route}: ${block.messagesPerSec} msgs/s, service CPU ${round((block.serviceCpuS * 1e6) / n, 1)} ms per 1000 (${round((block.answeredCpuS * 1e6) / n, 1)} until answered), ${JSON.stringify(block.statuses)}`
        )
        blocks.push(block)
      }
    } finally {
      memory["drain through OneAPI and SMPP"] = sampler.stop()
      await service.stop()
    }
    const smpp = sideOf(blocks.filter((b) => b.route === "smpp"))
    const one = sideOf(blocks.filter((b) => b.route === "oneapi"))
    return {
      blockSize: n,
      order,
      blocks,
      smpp,
      oneapi: one,
      ratio: smpp.messagesPerSec > 0 ? round(one.messagesPerSec / smpp.messagesPerSec, 2) : 0,
      complete: blocks.every((b) => b.complete)
    }
  } finally {
    await oneapi.stop()
    await smsc.stop()
  }
}
