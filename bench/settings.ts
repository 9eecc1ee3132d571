/** How long and how big each part of the benchmark is, for a full run and for the CI smoke run. */
export interface Settings {
  readonly mode: "full" | "smoke"
  /** Seconds of each measured closed- or open-loop phase (service and pgbench alike). */
  readonly durationS: number
  /** Seconds of service warm-up (JIT, pool) before the first measurement. */
  readonly warmupS: number
  /** Connections (and pgbench clients) of the single-admission scenarios. */
  readonly connections: number
  /** Connections (and pgbench clients) of the batch scenario. */
  readonly batchConnections: number
  /** Recipients per batch. */
  readonly batchSize: number
  /** Due messages the dispatcher drains (and the claim SQL and graphile-worker drain); `--drain=N` overrides. */
  readonly drainCount: number
  /** Seconds after the seed transaction starts at which the seeded messages fall due. */
  readonly drainDueInS: number
  /** Longest a drain may take before it is reported as incomplete. */
  readonly drainTimeoutS: number
  /** Messages falling due per second in the steady flow (scenario 8). */
  readonly flowRate: number
  /** Seconds the steady flow lasts. */
  readonly flowDurationS: number
  /** Organisation A's backlog due at once in the fair-share scenarios (11-13). */
  readonly fairBacklog: number
  /** Seconds over which scenarios 11 and 12 measure (B has one message due each second of it). */
  readonly fairWindowS: number
  /** How A's backlog of scenarios 11-13 is written: through the API as batches of `batchSize`, or with SQL (`--fair-seed=sql`). */
  readonly fairSeed: "batches" | "sql"
  /** Old delivered messages seeded for retention to erase under scenario 1's load (scenario 16). */
  readonly retentionSeed: number
  /** Opt-outs seeded for the variant of scenario 1 run right after it (issue 40); `--opt-outs=N` overrides. */
  readonly optOutSeed: number
  /** Messages of each block of scenario 17 (the drain through OneAPI beside SMPP); `--oneapi-block=N` overrides. */
  readonly oneApiBlock: number
}

export const fullSettings: Settings = {
  mode: "full",
  durationS: 12,
  warmupS: 3,
  connections: 32,
  batchConnections: 2,
  batchSize: 1000,
  drainCount: 100_000,
  drainDueInS: 8,
  drainTimeoutS: 600,
  flowRate: 500,
  flowDurationS: 60,
  fairBacklog: 100_000,
  fairWindowS: 30,
  fairSeed: "batches",
  retentionSeed: 1_000_000,
  optOutSeed: 100_000,
  oneApiBlock: 10_000
}

export const smokeSettings: Settings = {
  mode: "smoke",
  durationS: 2,
  warmupS: 1,
  connections: 32,
  batchConnections: 2,
  batchSize: 1000,
  drainCount: 1000,
  drainDueInS: 1,
  drainTimeoutS: 30,
  flowRate: 100,
  flowDurationS: 5,
  fairBacklog: 2000,
  fairWindowS: 6,
  fairSeed: "batches",
  retentionSeed: 20_000,
  optOutSeed: 2000,
  oneApiBlock: 500
}
