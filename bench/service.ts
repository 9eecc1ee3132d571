/**
 * Starts the service as a separate process (`node src/main.ts`) on a free port, waits until it
 * answers /ready, samples its memory, and stops it with SIGTERM (so `--cpu-prof` is written).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createWriteStream, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

export interface Service {
  readonly pid: number
  readonly base: string
  readonly adminToken: string
  readonly logFile: string
  readonly stop: () => Promise<void>
}

export interface StartOptions {
  /** The PostgreSQL database; undefined runs the embedded database in memory (`SMS_DATA_DIR=memory://`). */
  readonly databaseUrl: string | undefined
  readonly logDir: string
  /** Extra flags for node, e.g. `--cpu-prof`. */
  readonly nodeFlags?: ReadonlyArray<string>
  /** Environment variables on top of the bench's defaults (another provider, tracing). */
  readonly env?: Readonly<Record<string, string>>
}

const root = join(import.meta.dirname, "..")

/** A free TCP port on the loopback interface. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

const waitReady = async (child: ChildProcess, base: string, timeoutMs: number): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false
    try {
      const res = await fetch(`${base}/ready`)
      if (res.status === 200) return true
    } catch {
      // not listening yet
    }
    await sleep(200)
  }
  return false
}

const startOnce = async (options: StartOptions, attempt: number): Promise<Service | undefined> => {
  const port = await freePort()
  const adminToken = `bench-admin-${Math.random().toString(36).slice(2)}-token`
  const logFile = join(options.logDir, `service-${port}-${attempt}.log`)
  const log = createWriteStream(logFile)
  // the heap cap is the container image's (Dockerfile CMD): measure the service as it is deployed
  const { DATABASE_URL: _inherited, ...inherited } = process.env
  const database =
    options.databaseUrl === undefined ? { SMS_DATA_DIR: "memory://" } : { DATABASE_URL: options.databaseUrl }
  // BENCH_NODE_FLAGS: more flags for an experiment (`--trace-gc`, `--max-semi-space-size=32`...)
  const experiment = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []
  const child = spawn(
    process.execPath,
    ["--max-old-space-size=160", ...experiment, ...(options.nodeFlags ?? []), "src/main.ts"],
    {
      cwd: root,
      env: {
        ...inherited,
        ...database,
        PORT: String(port),
        HOST: "127.0.0.1",
        SMS_ADMIN_TOKEN: adminToken,
        LOG_LEVEL: "warn",
        SMS_SIMULATOR_RECEIPT_DELAY_MS: "0",
        SMS_SIMULATOR_SLOW_MS: "0",
        SMS_SCHEDULER_ENABLED: "true",
        ...options.env
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  child.stdout?.pipe(log)
  child.stderr?.pipe(log)
  const base = `http://127.0.0.1:${port}`
  if (!(await waitReady(child, base, 60_000))) {
    child.kill("SIGKILL")
    await exited(child)
    return undefined
  }
  return {
    pid: child.pid!,
    base,
    adminToken,
    logFile,
    stop: async () => {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
      await exited(child)
      clearTimeout(timer)
      log.end()
    }
  }
}

/** Starts the service; if it does not come up (e.g. someone's edit in progress), waits a minute and retries. */
export const startService = async (options: StartOptions, attempts = 3): Promise<Service> => {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const service = await startOnce(options, attempt)
    if (service !== undefined) return service
    if (attempt < attempts) {
      process.stderr.write(`service did not start (see ${options.logDir}); retrying in 60 s\n`)
      await sleep(60_000)
    }
  }
  throw new Error(`the service did not start after ${attempts} attempts; logs in ${options.logDir}`)
}

const statusField = (pid: number, field: string): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`))
  return line === undefined ? 0 : Number(line.split(/\s+/)[1]) / 1024
}

/**
 * Peak resident memory (MB) of a process over a phase: resets the kernel's high-water mark
 * (clear_refs 5), samples VmRSS every 100 ms, and reads VmHWM at the end.
 */
export const memorySampler = (pid: number) => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
  } catch {
    // not permitted: VmHWM is then the peak since start
  }
  let peak = statusField(pid, "VmRSS")
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, statusField(pid, "VmRSS"))
    } catch {
      // process gone
    }
  }, 100)
  return {
    stop: (): number => {
      clearInterval(timer)
      try {
        peak = Math.max(peak, statusField(pid, "VmRSS"), statusField(pid, "VmHWM"))
      } catch {
        // process gone
      }
      return Math.round(peak * 10) / 10
    }
  }
}
