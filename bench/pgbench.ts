/**
 * Runs pgbench with the scripts of bench/sql/ (prepared statements, like the service's driver)
 * and reads its per-transaction log for exact latency percentiles.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { percentile, round } from "./stats.ts"

export interface PgbenchOptions {
  readonly url: string
  /** A script of bench/sql/ (e.g. `admission`, `experiments/settle`), without `.sql`. */
  readonly script: string
  /** `{{NAME}}` placeholders of the script and their text. */
  readonly replacements?: Readonly<Record<string, string>>
  readonly vars: Readonly<Record<string, string | number>>
  readonly clients: number
  readonly durationS?: number
  /** Transactions per client (instead of a duration). */
  readonly transactions?: number
  /** Open loop: target transactions per second over all clients (`--rate`, Poisson arrivals). */
  readonly rate?: number
}

export interface PgbenchResult {
  readonly script: string
  readonly clients: number
  readonly rate: number | null
  readonly transactions: number
  readonly failed: number
  readonly tps: number
  /** Latency in ms; with `rate`, measured from each transaction's scheduled start (open loop). */
  readonly p50Ms: number
  readonly p99Ms: number
  readonly meanMs: number
  readonly wallS: number
}

const sqlDir = join(import.meta.dirname, "sql")

const execute = (args: ReadonlyArray<string>, cwd: string): Promise<string> =>
  new Promise((resolve, reject) => {
    // the service's sessions run without JIT compilation (src/db/Database.ts): so do the baselines'
    execFile(
      "pgbench",
      args,
      { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, PGOPTIONS: "-c jit=off" } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`pgbench failed: ${stderr.trim() || error.message}`))
        else resolve(`${stdout}\n${stderr}`)
      }
    )
  })

const field = (out: string, pattern: RegExp): number => {
  const m = pattern.exec(out)
  return m === null ? Number.NaN : Number(m[1])
}

export const runPgbench = async (options: PgbenchOptions): Promise<PgbenchResult> => {
  const dir = mkdtempSync(join(tmpdir(), "sms-bench-pgbench-"))
  try {
    let text = readFileSync(join(sqlDir, `${options.script}.sql`), "utf8")
    for (const [name, value] of Object.entries(options.replacements ?? {})) text = text.replaceAll(`{{${name}}}`, value)
    const script = join(dir, `${basename(options.script)}.sql`)
    writeFileSync(script, text)
    const args = [
      "-n",
      "-M",
      "prepared",
      "-c",
      String(options.clients),
      "-j",
      String(Math.min(2, options.clients)),
      ...(options.durationS !== undefined ? ["-T", String(options.durationS)] : []),
      ...(options.transactions !== undefined ? ["-t", String(options.transactions)] : []),
      ...(options.rate !== undefined ? ["-R", String(options.rate)] : []),
      "-f",
      script,
      "-l",
      "--log-prefix",
      join(dir, "txlog"),
      ...Object.entries(options.vars).flatMap(([k, v]) => ["-D", `${k}=${v}`]),
      options.url
    ]
    const started = performance.now()
    const out = await execute(args, dir)
    const wallS = (performance.now() - started) / 1000
    // log lines: client_id transaction_no time_us script_no epoch epoch_us [schedule_lag_us]
    const latencies: Array<number> = []
    for (const file of readdirSync(dir).filter((f) => f.startsWith("txlog"))) {
      for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
        const parts = line.split(" ")
        if (parts.length >= 6 && parts[2] !== "skipped" && parts[2] !== "failed")
          latencies.push(Number(parts[2]) / 1000)
      }
    }
    return {
      script: options.script,
      clients: options.clients,
      rate: options.rate ?? null,
      transactions: field(out, /number of transactions actually processed: (\d+)/),
      failed: field(out, /number of failed transactions: (\d+)/) || 0,
      tps: round(field(out, /tps = ([\d.]+)/), 1),
      p50Ms: round(percentile(latencies, 0.5), 2),
      p99Ms: round(percentile(latencies, 0.99), 2),
      meanMs: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length), 2),
      wallS: round(wallS, 2)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
