/**
 * The peer of scenario 6: graphile-worker (its own schema in the same database) draining as many
 * no-op jobs, with the dispatcher's shape: 16 jobs in flight over a pool of 10 connections.
 */
import { Logger, run, runMigrations } from "graphile-worker"
import { query, scalar } from "./psql.ts"
import { round } from "./stats.ts"

export interface GraphileResult {
  readonly jobs: number
  readonly concurrency: number
  readonly seedS: number
  readonly drainS: number
  readonly jobsPerSec: number
  readonly remaining: number
}

const quiet = new Logger(() => (level, message) => {
  if (String(level) === "error") process.stderr.write(`graphile-worker: ${message}\n`)
})

export const graphileDrain = async (
  url: string,
  jobs: number,
  concurrency = 16,
  maxPoolSize = 10
): Promise<GraphileResult> => {
  await runMigrations({ connectionString: url, logger: quiet })
  const seedStarted = performance.now()
  await query(
    url,
    `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
      SELECT ROW('noop', '{}'::json, NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec
      FROM generate_series(1, ${jobs})))`
  )
  const seedS = (performance.now() - seedStarted) / 1000
  let completed = 0
  let finish: () => void = () => {}
  const allDone = new Promise<void>((resolve) => (finish = resolve))
  const started = performance.now()
  const runner = await run({
    connectionString: url,
    concurrency,
    maxPoolSize,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: quiet,
    taskList: { noop: async () => {} }
  })
  runner.events.on("job:complete", () => {
    if (++completed >= jobs) finish()
  })
  await allDone
  const drainS = (performance.now() - started) / 1000
  await runner.stop()
  const remaining = Number(await scalar(url, "SELECT count(*) FROM graphile_worker.jobs"))
  return {
    jobs,
    concurrency,
    seedS: round(seedS, 2),
    drainS: round(drainS, 2),
    jobsPerSec: round(jobs / drainS, 1),
    remaining
  }
}
