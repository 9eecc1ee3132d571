/**
 * Scenarios 11-13, sharing the dispatcher fairly (docs/decisions.md#fair-share-and-fleet-limits):
 * - 11: organisation A has a backlog due at once (100,000 in the full run), organisation B one
 *   message due each second while A drains; B's due->handed-over lag p99, in-process simulator.
 * - 12: the same through SMPP to the SMSC simulator with `mps` 200 (a service process of its
 *   own): B's lag p99 and A's rate against the cap, over the measured window.
 * - 13: immediate sends at 20/s while a backlog drains: their p99, in-process simulator.
 * A's backlog is measured over a window, not drained to the end; what is left of it is moved
 * out of the way (due in 2999) so that later scenarios start from an idle dispatcher.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { type BenchContext, jsonHeaders, messagesPath, type OrgWithLot } from "../context.ts"
import { type LoadResult, pacedLoad } from "../load.ts"
import { query, scalar } from "../psql.ts"
import { memorySampler, startService } from "../service.ts"
import { startSmsc } from "../smsc.ts"
import { round } from "../stats.ts"
import { seed } from "./drain.ts"

export interface FairShareFacts {
  readonly backlog: number
  readonly windowS: number
  /** B's messages due in the window, and how many were handed over in it. */
  readonly bDue: number
  readonly bHandedOver: number
  /** B's due->handed-over lag (submitted_at - due_at), seconds. */
  readonly bLagP99S: number
  readonly bLagMaxS: number
  /** A's messages handed over per second over the window (after its first seconds). */
  readonly aPerSec: number
}

/** Seconds before A's backlog falls due, leaving time to seed it and to schedule B's messages. */
const leadS = (backlog: number) => 5 + Math.ceil(backlog / 10_000)

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

const measure = async (
  url: string,
  a: OrgWithLot,
  b: OrgWithLot,
  due: string,
  windowS: number,
  backlog: number
): Promise<FairShareFacts> => {
  const [bRow] = await query(
    url,
    `SELECT count(*), count(submitted_at),
      percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM coalesce(submitted_at, now()) - due_at)),
      max(extract(epoch FROM coalesce(submitted_at, now()) - due_at))
    FROM messages WHERE organisation_id = '${b.id}' AND due_at > '${due}'::timestamptz
      AND due_at <= '${due}'::timestamptz + make_interval(secs => ${windowS})`
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
    windowS,
    bDue: Number(bRow![0]),
    bHandedOver: Number(bRow![1]),
    bLagP99S: round(Number(bRow![2]), 3),
    bLagMaxS: round(Number(bRow![3]), 3),
    aPerSec: round(Number(aRow![0]) / (windowS - 2), 1)
  }
}

/** A's backlog and B's one message a second, on the running service `ctx.service`. */
const backlogAndTrickle = async (ctx: BenchContext, a: OrgWithLot, b: OrgWithLot): Promise<FairShareFacts> => {
  const { fairBacklog: backlog, fairWindowS: windowS } = ctx.settings
  const { due } = await seed(ctx.url, a, backlog, leadS(backlog))
  // B's first message a second after A's backlog fell due, or, when seeding ran past that (a
  // loaded machine), as soon as it can still be scheduled
  await scheduleEachSecond(ctx, b, Math.max(Date.parse(due) + 1000, Date.now() + 2000), windowS - 1)
  await sleep(Math.max(0, Date.parse(due) + windowS * 1000 + 1000 - Date.now()))
  const facts = await measure(ctx.url, a, b, due, windowS, backlog)
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
  const { due } = await seed(ctx.url, a, backlog, leadS(backlog))
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
