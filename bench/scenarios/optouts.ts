/**
 * Scenario 1 with opt-outs (issue 40): what the opt-out check of the one-statement admission costs
 * when the organisation's list is long. Every admission looks its recipient up in the list by the
 * list's key (docs/two-way.md), so the list's length should hardly show: the target is req/s and
 * p99 within 10 % of the same load on the same organisation with its list empty.
 *
 * Run right after scenario 1, on a dedicated organisation: scenario 1's closed loop (warm-up
 * included) with the list empty, then `optOutSeed` opt-outs seeded (100,000; 2,000 in the smoke
 * run), then the same closed loop again. The caller's `tidy` (VACUUM ANALYZE and a checkpoint)
 * comes before each of the two runs, so that both start alike; scenario 1's own run is no baseline
 * for it, as it follows 36 s of pgbench and starts with most of shared_buffers dirty (70 % in the
 * first run of issue 40, bench/HISTORY.md).
 *
 * The numbers opted out are `+26134` followed by 2, 4, ... 2n over 7 digits (bench/sql/seed-opt-outs.sql).
 * Both runs send the same requests (`optOutRecipients`): 15 in 16 to `benchRecipient`, as scenario
 * 1 does, and 1 in 16 to one of 16 odd numbers spread over the opted-out range, so that some lookups
 * land among the list's entries, not only beside them. None of them is opted out, so no request is
 * refused (a refusal makes the run fail); the scans of the list's key per admission over the
 * second run's measured window (pg_stat_user_indexes) show the check ran.
 *
 * The opt-outs are written with SQL, not through `PUT /opt-outs/{phone_number}/`: 100,000 of them
 * through the API would take minutes, and how fast they are made is not what is measured.
 */
import { join } from "node:path"
import { benchRecipient, type BenchContext, type OrgWithLot } from "../context.ts"
import type { LoadResult } from "../load.ts"
import { query, runFile } from "../psql.ts"
import { round } from "../stats.ts"
import { serviceClosedLoop } from "./admission.ts"

/** The largest seed whose numbers (2n over 7 digits) stay Malagasy mobile numbers. */
export const maxOptOutSeed = 4_999_999

/** `count` odd numbers spread evenly over the range of `seeded` opt-outs: among them, never one of them. */
const amongOptedOut = (seeded: number, count: number): Array<string> =>
  Array.from(
    { length: count },
    (_, j) => `+26134${String(2 * Math.floor(((j + 0.5) * seeded) / count) + 1).padStart(7, "0")}`
  )

/** The requests' recipients in turn, in both runs: 15 in 16 `benchRecipient`, 1 in 16 a number among the opted-out ones. */
export const optOutRecipients = (seeded: number): ReadonlyArray<string> => {
  const among = amongOptedOut(seeded, 16)
  return Array.from({ length: 256 }, (_, k) => (k % 16 === 0 ? among[k / 16]! : benchRecipient))
}

export interface OptOutFacts {
  /** Opt-outs seeded in the organisation between the two runs, and the seconds the seeding took. */
  readonly seeded: number
  readonly seedS: number
  /** Scenario 1's load against the organisation, its list empty. */
  readonly without: LoadResult
  /** The same load once the organisation holds the seeded opt-outs. */
  readonly with: LoadResult
  /** Answers other than 202 in the second run (an opted-out recipient's 400 among them): 0 when the seed missed the load's numbers. */
  readonly refused: number
  /**
   * Scans of the opt-out list's key (`opt_outs_pkey`) per idempotency key inserted, over the second
   * run's measured window: about 1 when each admission looked its recipient up, 0 when none did.
   */
  readonly lookupsPerAdmission: number
}

/** Seeds the organisation's opt-outs; the seconds it took. */
const seedOptOuts = async (ctx: BenchContext, org: OrgWithLot): Promise<number> => {
  const started = performance.now()
  await runFile(ctx.url, join(import.meta.dirname, "..", "sql", "seed-opt-outs.sql"), {
    org: org.id,
    n: ctx.settings.optOutSeed
  })
  return round((performance.now() - started) / 1000, 1)
}

/**
 * The statistics as PostgreSQL reports them: each connection's backend adds what its transactions
 * counted at most once a second and leaves for later a counter it finds locked by another, so the
 * last second or so of either counter may be missing from a reading (0.96 over a smoke run's 2 s).
 */
const lookupCounters = async (url: string): Promise<{ readonly scans: number; readonly keys: number }> => {
  const [row] = await query(
    url,
    `SELECT (SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'opt_outs_pkey'),
      (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'idempotency_keys')`
  )
  return { scans: Number(row?.[0] ?? Number.NaN), keys: Number(row?.[1] ?? Number.NaN) }
}

/** Scenario 1's service load against `org`, list empty, then holding the seeded opt-outs; `tidy` before the second. */
export const admissionWithOptOuts = async (
  ctx: BenchContext,
  org: OrgWithLot,
  tidy: () => Promise<void>,
  log: (line: string) => void
): Promise<OptOutFacts> => {
  const seeded = ctx.settings.optOutSeed
  const recipients = optOutRecipients(seeded)
  const orgCtx = { ...ctx, org }
  const without = await serviceClosedLoop(orgCtx, "s1-opt-outs-none", undefined, recipients)
  const seedS = await seedOptOuts(ctx, org)
  log(`seeded ${seeded} opt-outs in ${seedS} s`)
  await tidy()
  let before = { scans: 0, keys: 0 }
  const load = await serviceClosedLoop(
    orgCtx,
    "s1-opt-outs",
    async () => {
      before = await lookupCounters(ctx.url)
    },
    recipients
  )
  const after = await lookupCounters(ctx.url)
  const keys = after.keys - before.keys
  return {
    seeded,
    seedS,
    without,
    with: load,
    refused: Object.entries(load.statusCounts).reduce((n, [status, count]) => n + (status === "202" ? 0 : count), 0),
    lookupsPerAdmission: keys > 0 ? round((after.scans - before.scans) / keys, 2) : 0
  }
}
