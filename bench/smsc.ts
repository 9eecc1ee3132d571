/** Starts the SMSC simulator (`simulator/smsc/main.ts`) as a separate process on a free port, for the SMPP drain. */
import { spawn } from "node:child_process"
import { createWriteStream } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { listens } from "../test/support/ServiceProcess.ts"
import { freePort } from "./service.ts"

export interface SmscProcess {
  readonly pid: number
  readonly port: number
  /** `smpp://sim:sim@127.0.0.1:<port>`. */
  readonly url: string
  readonly stop: () => Promise<void>
}

/** `receiptDelayMs`: between an answer and its receipt (0 unless told). */
export const startSmsc = async (logDir: string, receiptDelayMs = 0): Promise<SmscProcess> => {
  const port = await freePort()
  const log = createWriteStream(join(logDir, `smsc-${port}.log`))
  const child = spawn(process.execPath, ["simulator/smsc/main.ts"], {
    cwd: join(import.meta.dirname, ".."),
    // a data directory of its own: the bench's database is new, so receipts an earlier run still owed would match nothing
    env: {
      ...process.env,
      SMS_SMSC_PORT: String(port),
      SMS_SMSC_DATA_DIR: join(logDir, `smsc-${port}`),
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
      throw new Error(`the SMSC simulator did not start; see ${logDir}`)
    await sleep(100)
  }
  return {
    pid: child.pid!,
    port,
    url: `smpp://sim:sim@127.0.0.1:${port}`,
    stop: async () => {
      child.kill("SIGTERM")
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)))
      log.end()
    }
  }
}
