/**
 * Scenario 1 with opt-outs (issue 40): what the opt-out check of the one-statement admission costs
 * when the organisation's list is long. Every admission looks its recipient up in the list by the
 * list's key (docs/two-way.md), so the list's length should hardly show: the target is req/s and
 * p99 within 10 % of the same load on an organisation without opt-outs.
 *
 * Run right after scenario 1, on two organisations granted alike: `full`, holding `optOutSeed`
 * opt-outs (100,000; 2,000 in the smoke run), and `empty`, holding none. After the seed and the
 * caller's VACUUM ANALYZE and checkpoint, each gets scenario 1's warm-up, then scenario 1's closed
 * loop runs in blocks of half its duration, alternated empty, full, full, empty, twice: each side
 * gets scenario 1's duration twice over, and a drift of the machine's speed weighs on both alike.
 * Each side's req/s is its answers over its blocks' time, its p99 that of its blocks' answers
 * pooled. One run of each, one after the other, was not enough: that way, an organisation holding
 * 1 opt-out came out at 0.87-1.06 of its own run with none just before in req/s and 0.78-1.35 in p99
 * (bench/HISTORY.md, issue 40).
 *
 * The numbers opted out are `+26134` followed by 2, 4, ... 2n over 7 digits (bench/sql/seed-opt-outs.sql).
 * Both organisations get the same requests (`optOutRecipients`): 15 in 16 to `benchRecipient`, as
 * scenario 1 sends, and 1 in 16 to one of 16 odd numbers spread over the opted-out range, so that
 * some lookups land among the list's entries, not only beside them. None of them is opted out, so
 * no request is refused (a refusal makes the run fail); the scans of the list's key per admission
 * over the measured blocks (pg_stat_user_indexes) show the check ran.
 *
 * The opt-outs are written with SQL, not through `PUT /opt-outs/{phone_number}/`: 100,000 of them
 * through the API would take minutes, and how fast they are made is not what is measured.
 */
import { join } from "node:path"
import { benchRecipient, type BenchContext, type OrgWithLot, scheduledRequest } from "../context.ts"
import { autocannonLoad, type LoadResult, type Sample, summarise } from "../load.ts"
import { query, runFile } from "../psql.ts"
import { round } from "../stats.ts"

/** The largest seed whose numbers (2n over 7 digits) stay Malagasy mobile numbers. */
export const maxOptOutSeed = 4_999_999

/** The order of the measured blocks: e the organisation without opt-outs, f the one holding them. */
export const blockOrder = "effeeffe"

/** `count` odd numbers spread evenly over the range of `seeded` opt-outs: among them, never one of them. */
const amongOptedOut = (seeded: number, count: number): Array<string> =>
  Array.from(
    { length: count },
    (_, j) => `+26134${String(2 * Math.floor(((j + 0.5) * seeded) / count) + 1).padStart(7, "0")}`
  )

/** The requests' recipients in turn, on both organisations: 15 in 16 `benchRecipient`, 1 in 16 a number among the opted-out ones. */
export const optOutRecipients = (seeded: number): ReadonlyArray<string> => {
  const among = amongOptedOut(seeded, 16)
  return Array.from({ length: 256 }, (_, k) => (k % 16 === 0 ? among[k / 16]! : benchRecipient))
}

export interface OptOutOrgs {
  readonly empty: OrgWithLot
  readonly full: OrgWithLot
}

export interface OptOutFacts {
  /** Opt-outs seeded in the organisation `full`, and the seconds the seeding took. */
  readonly seeded: number
  readonly seedS: number
  /** Seconds of each measured block, in `blockOrder`. */
  readonly blockS: number
  /** Each block's req/s and p99, in `blockOrder`. */
  readonly blocks: ReadonlyArray<{ readonly org: "e" | "f"; readonly reqPerSec: number; readonly p99Ms: number }>
  /** The blocks of the organisation without opt-outs, pooled. */
  readonly without: LoadResult
  /** The blocks of the organisation holding them, pooled. */
  readonly with: LoadResult
  /** Answers other than 202 (an opted-out recipient's 400 among them): 0 when the seed missed the load's numbers. */
  readonly refused: number
  /**
   * Scans of the opt-out list's key (`opt_outs_pkey`) per idempotency key inserted, over the
   * measured blocks: about 1 when each admission looked its recipient up, 0 when none did.
   */
  readonly lookupsPerAdmission: number
}

/** Seeds the organisation's opt-outs; the seconds it took. */
export const seedOptOuts = async (ctx: BenchContext, org: OrgWithLot): Promise<number> => {
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
 * last second or so of either counter may be missing from a reading (0.96 over 2 s in a smoke run).
 */
const lookupCounters = async (url: string): Promise<{ readonly scans: number; readonly keys: number }> => {
  const [row] = await query(
    url,
    `SELECT (SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'opt_outs_pkey'),
      (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'idempotency_keys')`
  )
  return { scans: Number(row?.[0] ?? Number.NaN), keys: Number(row?.[1] ?? Number.NaN) }
}

/** Scenario 1's service load on both organisations, alternated in blocks (`full` seeded before). */
export const admissionWithOptOuts = async (
  ctx: BenchContext,
  orgs: OptOutOrgs,
  seedS: number
): Promise<OptOutFacts> => {
  const { connections, durationS, warmupS, optOutSeed } = ctx.settings
  const recipients = optOutRecipients(optOutSeed)
  const blockS = durationS / 2
  const requestOf = (org: "e" | "f", tag: string) =>
    scheduledRequest({ ...ctx, org: org === "e" ? orgs.empty : orgs.full }, tag, recipients)
  const load = (org: "e" | "f", tag: string, seconds: number, samples?: Array<Sample>) =>
    autocannonLoad({
      base: ctx.service.base,
      connections,
      durationS: seconds,
      request: requestOf(org, tag),
      expectedStatus: 202,
      ...(samples === undefined ? {} : { samples })
    })
  await load("e", "s1-opt-outs-e-warmup", warmupS)
  await load("f", "s1-opt-outs-f-warmup", warmupS)
  const before = await lookupCounters(ctx.url)
  const samples: Record<"e" | "f", Array<Sample>> = { e: [], f: [] }
  const seconds = { e: 0, f: 0 }
  const errors = { e: 0, f: 0 }
  const blocks: Array<OptOutFacts["blocks"][number]> = []
  for (const [i, letter] of [...blockOrder].entries()) {
    const org = letter === "e" ? "e" : "f"
    const result = await load(org, `s1-opt-outs-${org}${i}`, blockS, samples[org])
    seconds[org] += result.durationS
    errors[org] += result.errors
    blocks.push({ org, reqPerSec: result.reqPerSec, p99Ms: result.p99Ms })
  }
  const after = await lookupCounters(ctx.url)
  const pooled = (org: "e" | "f"): LoadResult =>
    summarise("autocannon", connections, null, seconds[org], 202, samples[org], errors[org])
  const without = pooled("e")
  const withOptOuts = pooled("f")
  const keys = after.keys - before.keys
  const notAccepted = (r: LoadResult) =>
    Object.entries(r.statusCounts).reduce((n, [status, count]) => n + (status === "202" ? 0 : count), 0)
  return {
    seeded: optOutSeed,
    seedS,
    blockS,
    blocks,
    without,
    with: withOptOuts,
    refused: notAccepted(without) + notAccepted(withOptOuts),
    lookupsPerAdmission: keys > 0 ? round((after.scans - before.scans) / keys, 2) : 0
  }
}
