/**
 * Starts the OneAPI simulator (`simulator/oneapi/main.ts`, docs/operators.md#the-oneapi-simulator)
 * as a separate process on a free port, zero delays, for the drain through a OneAPI route.
 */
import { spawn } from "node:child_process"
import { createWriteStream } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { listens } from "../test/support/ServiceProcess.ts"
import { freePort } from "./service.ts"

export interface OneApiProcess {
  readonly pid: number
  /** `http://127.0.0.1:<port>`: the API's base URL. */
  readonly baseUrl: string
  /** `<baseUrl>/oauth/v3/token`. */
  readonly tokenUrl: string
  /** Its client (`sim` / `sim`). */
  readonly clientId: string
  readonly clientSecret: string
  readonly stop: () => Promise<void>
}

/** `receiptDelayMs`: between an answer and its receipt (0 unless told). */
export const startOneApi = async (logDir: string, receiptDelayMs = 0): Promise<OneApiProcess> => {
  const port = await freePort()
  const log = createWriteStream(join(logDir, `oneapi-${port}.log`))
  const child = spawn(process.execPath, ["simulator/oneapi/main.ts"], {
    cwd: join(import.meta.dirname, ".."),
    // a data directory of its own: correlators and receipts of an earlier run would match nothing
    env: {
      ...process.env,
      SMS_ONEAPI_PORT: String(port),
      SMS_ONEAPI_DATA_DIR: join(logDir, `oneapi-${port}`),
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
      throw new Error(`the OneAPI simulator did not start; see ${logDir}`)
    await sleep(100)
  }
  const baseUrl = `http://127.0.0.1:${port}`
  return {
    pid: child.pid!,
    baseUrl,
    tokenUrl: `${baseUrl}/oauth/v3/token`,
    clientId: "sim",
    clientSecret: "sim",
    stop: async () => {
      child.kill("SIGTERM")
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)))
      log.end()
    }
  }
}
