/**
 * Starts a simulator as a separate process on a free port, zero delays, with a data directory of
 * its own (the bench's database is new, so receipts or correlators an earlier run kept would match
 * nothing): the SMSC simulator (`simulator/smsc/main.ts`) for drains through an SMPP route, the
 * OneAPI simulator (`simulator/oneapi/main.ts`, docs/operators.md#the-oneapi-simulator) for
 * drains through a OneAPI route.
 */
import { spawn } from "node:child_process"
import { createWriteStream } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { listens } from "../test/support/ServiceProcess.ts"
import { freePort } from "./service.ts"

interface SimulatorProcess {
  readonly pid: number
  readonly port: number
  readonly stop: () => Promise<void>
}

export interface SmscProcess extends SimulatorProcess {
  /** `smpp://sim:sim@127.0.0.1:<port>`. */
  readonly url: string
}

export interface OneApiProcess extends SimulatorProcess {
  /** `http://127.0.0.1:<port>`: the API's base URL. */
  readonly baseUrl: string
  /** `<baseUrl>/oauth/v3/token`. */
  readonly tokenUrl: string
  /** Its client (`sim` / `sim`). */
  readonly clientId: string
  readonly clientSecret: string
}

/** The simulator `kind` (`smsc`, `oneapi`), its variables prefixed `SMS_<KIND>_`; `receiptDelayMs` between an answer and its receipt. */
const start = async (kind: "smsc" | "oneapi", logDir: string, receiptDelayMs: number): Promise<SimulatorProcess> => {
  const port = await freePort()
  const prefix = `SMS_${kind.toUpperCase()}`
  const log = createWriteStream(join(logDir, `${kind}-${port}.log`))
  const child = spawn(process.execPath, [`simulator/${kind}/main.ts`], {
    cwd: join(import.meta.dirname, ".."),
    env: {
      ...process.env,
      [`${prefix}_PORT`]: String(port),
      [`${prefix}_DATA_DIR`]: join(logDir, `${kind}-${port}`),
      SMS_SIMULATOR_RECEIPT_DELAY_MS: String(receiptDelayMs),
      SMS_SIMULATOR_SLOW_MS: "0"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout?.pipe(log)
  child.stderr?.pipe(log)
  const deadline = Date.now() + 20_000
  while (!(await listens(port))) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`the ${kind} simulator did not start; see ${logDir}`)
    await sleep(100)
  }
  return {
    pid: child.pid!,
    port,
    stop: async () => {
      child.kill("SIGTERM")
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)))
      log.end()
    }
  }
}

export const startSmsc = async (logDir: string, receiptDelayMs = 0): Promise<SmscProcess> => {
  const sim = await start("smsc", logDir, receiptDelayMs)
  return { ...sim, url: `smpp://sim:sim@127.0.0.1:${sim.port}` }
}

export const startOneApi = async (logDir: string, receiptDelayMs = 0): Promise<OneApiProcess> => {
  const sim = await start("oneapi", logDir, receiptDelayMs)
  const baseUrl = `http://127.0.0.1:${sim.port}`
  return { ...sim, baseUrl, tokenUrl: `${baseUrl}/oauth/v3/token`, clientId: "sim", clientSecret: "sim" }
}
