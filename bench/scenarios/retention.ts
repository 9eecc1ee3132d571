/**
 * Scenario 16 (issue 23): scenario 1's closed loop while retention erases old messages in the
 * background. `retentionSeed` delivered messages of a dedicated organisation, final for 30 days
 * and more, are seeded with SQL (bench/sql/seed-erasable.sql). Then, each time on a fresh
 * service process with scenario 1's warm-up:
 * - idle: the organisation has no retention (nor has the service a default), nothing to erase;
 * - erasing: its retention set to 1 day with SQL (the column the operator API sets), the service restarted. The
 *   retention loop (src/dispatch/BackgroundLoops.ts) looks when the process starts and then every 5
 *   minutes while it finds nothing, with no setting to look sooner; so the restart is what starts
 *   it at once, and it goes on set after set (20 ms apart) while they come back full. The
 *   measurement starts only once messages are being erased.
 * The messages erased within the measured window (their `erased_at`) show the erasure ran.
 */
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { BenchContext, OrgWithLot } from "../context.ts"
import type { LoadResult } from "../load.ts"
import { query, runFile, scalar } from "../psql.ts"
import { memorySampler, type Service, startService } from "../service.ts"
import { round } from "../stats.ts"
import { serviceClosedLoop } from "./admission.ts"

export interface RetentionFacts {
  /** Old delivered messages seeded, and the seconds the seeding took (VACUUM ANALYZE included). */
  readonly seeded: number
  readonly seedS: number
  /** Scenario 1's load with nothing to erase. */
  readonly idle: LoadResult
  /** The same load while retention erases the seeded messages. */
  readonly erasing: LoadResult
  /** Seeded messages erased before the measured window (the warm-up's time), within it, and left at its end. */
  readonly erasedBefore: number
  readonly erasedInWindow: number
  readonly leftAfter: number
  /** Seconds of the measured window, and the erasure's rate within it. */
  readonly windowS: number
  readonly erasedPerSec: number
  /** Erased messages whose key still holds its answer, and credits consumed by the lot beyond the seeded ones: both 0 when erasure worked. */
  readonly keysUnerased: number
  readonly creditsMoved: number
}

/** The peak RSS of the erasing service goes to `memory` under this name. */
export const retentionPhase = "admission while retention erases"

const erased = (url: string, org: OrgWithLot, from?: Date, to?: Date) =>
  scalar(
    url,
    `SELECT count(*) FROM messages WHERE organisation_id = '${org.id}' AND erased_at IS NOT NULL` +
      (from === undefined || to === undefined
        ? ""
        : ` AND erased_at >= '${from.toISOString()}' AND erased_at < '${to.toISOString()}'`)
  ).then(Number)

/** Runs `body` against a fresh service process on the bench database, stopping it after. */
const withService = async <A>(
  ctx: BenchContext,
  logDir: string,
  body: (service: Service) => Promise<A>
): Promise<A> => {
  const service = await startService({ databaseUrl: ctx.url, logDir })
  try {
    return await body(service)
  } finally {
    await service.stop()
  }
}

export const retentionUnderLoad = async (
  ctx: BenchContext,
  org: OrgWithLot,
  logDir: string,
  memory: Record<string, number>,
  log: (line: string) => void
): Promise<RetentionFacts> => {
  const seeded = ctx.settings.retentionSeed
  const started = performance.now()
  await runFile(ctx.url, join(import.meta.dirname, "..", "sql", "seed-erasable.sql"), {
    org: org.id,
    lot: org.lot,
    n: seeded,
    age_days: 30
  })
  const seedS = round((performance.now() - started) / 1000, 1)
  log(`seeded ${seeded} old delivered messages in ${seedS} s`)

  const idle = await withService(ctx, logDir, (service) => serviceClosedLoop({ ...ctx, service }, "s16-idle"))
  const idleErased = await erased(ctx.url, org)
  if (idleErased > 0) throw new Error(`${idleErased} message(s) erased while retention was unset`)
  // set between the processes, not through the idle one: its compaction, collapsing the seeded
  // timelines set after set, keeps the loop that also erases running, so it would start erasing
  await query(ctx.url, `UPDATE organisations SET retention_days = 1 WHERE id = '${org.id}'`)

  return withService(ctx, logDir, async (service) => {
    const sampler = memorySampler(service.pid)
    try {
      // the loop's first pass starts with the process; wait for its first set to commit
      const deadline = Date.now() + 60_000
      while ((await erased(ctx.url, org)) === 0) {
        if (Date.now() > deadline) throw new Error("retention erased nothing within 60 s of the service's start")
        await sleep(100)
      }
      let windowStart = new Date()
      let erasedBefore = 0
      const erasing = await serviceClosedLoop({ ...ctx, service }, "s16-erasing", async () => {
        windowStart = new Date()
        erasedBefore = await erased(ctx.url, org)
      })
      const windowEnd = new Date()
      const erasedInWindow = await erased(ctx.url, org, windowStart, windowEnd)
      const leftAfter = seeded - (await erased(ctx.url, org))
      const windowS = (windowEnd.getTime() - windowStart.getTime()) / 1000
      const keysUnerased = Number(
        await scalar(
          ctx.url,
          `SELECT count(*) FROM idempotency_keys k JOIN messages m
        ON m.organisation_id = k.organisation_id AND m.id = k.message_id
        WHERE k.organisation_id = '${org.id}' AND m.erased_at IS NOT NULL AND k.response_body IS NOT NULL`
        )
      )
      const creditsMoved = Number(
        await scalar(
          ctx.url,
          `SELECT reserved + consumed - ${seeded} FROM credit_lots
        WHERE organisation_id = '${org.id}' AND id = ${org.lot}`
        )
      )
      if (keysUnerased > 0 || creditsMoved !== 0)
        log(`erasure left ${keysUnerased} key answer(s) and moved ${creditsMoved} credit(s)`)
      if (leftAfter === 0)
        log("retention erased every seeded message before the window ended: part of the window ran without it")
      return {
        seeded,
        seedS,
        idle,
        erasing,
        erasedBefore,
        erasedInWindow,
        leftAfter,
        windowS: round(windowS, 1),
        erasedPerSec: round(erasedInWindow / windowS, 0),
        keysUnerased,
        creditsMoved
      }
    } finally {
      memory[retentionPhase] = sampler.stop()
    }
  })
}
