/**
 * Scenarios 1 and 2: scheduled single admission, closed loop at full speed and open loop at
 * half the measured maximum, each against pgbench replaying the same SQL the same way.
 */
import { type BenchContext, pgVars, scheduledRequest } from "../context.ts"
import { autocannonLoad, type LoadResult, pacedLoad } from "../load.ts"
import { type PgbenchResult, runPgbench } from "../pgbench.ts"

/** The service's connection pool (src/db/Database.ts maxConnections): pgbench at that concurrency too. */
export const servicePoolSize = 10

/** Clients of the reference single-statement admission (bench/sql/reference-admission.sql): the target's baseline. */
export const referenceClients = 10

export interface ClosedLoopResult {
  readonly pgbench: PgbenchResult
  /** The same script with as many clients as the service has connections. */
  readonly pgbenchPool: PgbenchResult
  /** The reference single-statement admission for one organisation, at `referenceClients`. */
  readonly reference: PgbenchResult
  readonly service: LoadResult
}

export const scheduledAdmission = async (ctx: BenchContext): Promise<ClosedLoopResult> => {
  const { connections, durationS } = ctx.settings
  const pgbench = await runPgbench({
    url: ctx.url,
    script: "admission",
    vars: pgVars(ctx.pgOrg),
    clients: connections,
    durationS
  })
  const pgbenchPool = await runPgbench({
    url: ctx.url,
    script: "admission",
    vars: pgVars(ctx.pgOrg),
    clients: servicePoolSize,
    durationS
  })
  const reference = await runPgbench({
    url: ctx.url,
    script: "reference-admission",
    vars: { org: ctx.pgOrg.id },
    clients: referenceClients,
    durationS
  })
  const service = await serviceClosedLoop(ctx, "s1")
  return { pgbench, pgbenchPool, reference, service }
}

/**
 * Scenario 1's load on the service alone: a warm-up, then the measured closed loop (keys tagged
 * `tag`); `beforeMeasure` runs between the two.
 */
export const serviceClosedLoop = async (
  ctx: BenchContext,
  tag: string,
  beforeMeasure?: () => Promise<void>
): Promise<LoadResult> => {
  const { connections, durationS, warmupS } = ctx.settings
  await autocannonLoad({
    base: ctx.service.base,
    connections,
    durationS: warmupS,
    request: scheduledRequest(ctx, `${tag}-warmup`),
    expectedStatus: 202
  })
  await beforeMeasure?.()
  return autocannonLoad({
    base: ctx.service.base,
    connections,
    durationS,
    request: scheduledRequest(ctx, tag),
    expectedStatus: 202
  })
}

export interface OpenLoopResult {
  readonly rate: number
  readonly pgbench: PgbenchResult
  /** Poisson arrivals, latency from the scheduled start (the row of the table). */
  readonly service: LoadResult
  /** autocannon `overallRate` (each connection sends its share at the start of every second). */
  readonly autocannon: LoadResult
}

export const openLoop = async (ctx: BenchContext, rate: number): Promise<OpenLoopResult> => {
  const { connections, durationS } = ctx.settings
  const pgbench = await runPgbench({
    url: ctx.url,
    script: "admission",
    vars: pgVars(ctx.pgOrg),
    clients: connections,
    durationS,
    rate
  })
  const service = await pacedLoad({
    base: ctx.service.base,
    connections,
    durationS,
    rate,
    request: scheduledRequest(ctx, "s2"),
    expectedStatus: 202
  })
  const autocannon = await autocannonLoad({
    base: ctx.service.base,
    connections,
    durationS,
    overallRate: rate,
    request: scheduledRequest(ctx, "s2ac"),
    expectedStatus: 202
  })
  return { rate, pgbench, service, autocannon }
}
