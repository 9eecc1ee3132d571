/**
 * `npm start` under a supervisor that stops it through npm: a SIGTERM to npm does not reach the
 * service (npm's shell dies without passing it on), so the service watches its parent and stops
 * as on its own SIGTERM once npm is gone: the port and the data directory's lock are released.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { lockFileName } from "../../src/db/DataDir.ts"
import { eventually } from "../support/Eventually.ts"
import { freePort, listens, root, servingLine } from "../support/ServiceProcess.ts"

const temp = mkdtempSync(join(tmpdir(), "sms-npm-start-"))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

// npm without the npm_* variables of an `npm test` running vitest (the inner npm sets its own),
// and without DATABASE_URL: the suite's PostgreSQL pass sets it, and `npm start` would then use
// that database and take no data directory's lock
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_") && name !== "DATABASE_URL")
)

/** Whether process `pid` still runs (a zombie nobody reaped yet counts as gone). */
const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
}

describe("npm start", () => {
  it("stops the service gracefully when npm gets SIGTERM: the node process ends, its port and lock released", async () => {
    const port = await freePort()
    const dataDir = join(temp, "data")
    // its own process group, so that whatever it leaves behind is ended after the test
    const npm = spawn("npm", ["start"], {
      cwd: root,
      env: { ...npmEnv, PORT: String(port), SMS_DATA_DIR: dataDir, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "ignore"],
      detached: true
    })
    let stdout = ""
    npm.stdout!.on("data", (chunk) => {
      stdout += chunk
    })
    try {
      await eventually(
        async () => stdout.includes(servingLine),
        (up) => up,
        { timeoutMs: 90_000, intervalMs: 250, what: "npm start serving" }
      )
      expect(await listens(port)).toBe(true)
      // the data directory's lock names the service's own process (node, under npm's shell)
      const service = Number(readFileSync(join(dataDir, lockFileName), "utf8").trim())
      expect(service).not.toBe(npm.pid)
      expect(running(service)).toBe(true)

      npm.kill("SIGTERM")
      await eventually(
        async () => running(service),
        (alive) => !alive,
        { timeoutMs: 20_000, intervalMs: 100, what: "the service gone with npm" }
      )
      expect(await listens(port)).toBe(false)
      // a graceful stop removes the lock (a kill would leave it for the next start to take over)
      expect(existsSync(join(dataDir, lockFileName))).toBe(false)
      expect(stdout).toContain("npm is gone: stopping as on SIGTERM")
    } finally {
      try {
        process.kill(-npm.pid!, "SIGKILL")
      } catch {
        // nothing left
      }
    }
  }, 150_000)
})
