// `node src/main.ts` as an operator starts it: configuration and the port are checked before
// anything is written, an unusable or busy data directory stops the start with one line, SIGTERM
// stops it cleanly, and the generated operator token holds across restarts.
import { spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { lockFileName } from "../../src/db/DataDir.ts"
import { Permissions } from "../../src/domain/Permissions.ts"
import { scratchDatabaseUrl } from "../support/ScratchDatabase.ts"
import { node, type Started, startService } from "../support/ServiceProcess.ts"

const temp = mkdtempSync(join(tmpdir(), "sms-startup-"))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

/** Starts the service with `env`, its scheduler off and warnings only unless `env` says otherwise. */
const start = (env: Record<string, string>): Promise<Started> =>
  startService({ SMS_SCHEDULER_ENABLED: "false", LOG_LEVEL: "warn", ...env })

/** Asserts the process ends by itself with status 1 and exactly one line on stderr, matching `line`. */
const expectRefused = async (started: Started, line: RegExp) => {
  const code = await Promise.race([
    started.exited,
    new Promise((done) => setTimeout(() => done("still running"), 30_000))
  ])
  if (code === "still running") started.child.kill("SIGKILL")
  expect(code).toBe(1)
  const { stdout, stderr } = started.output()
  expect(stderr.split("\n").filter((l) => l !== "")).toHaveLength(1)
  expect(stderr).toMatch(line)
  expect(stdout).not.toMatch(/svc_sms_|sms_admin_/)
}

const stop = async (started: Started) => {
  started.child.kill("SIGTERM")
  return started.exited
}

const operatorCall = async (port: number, token: string) =>
  (
    await fetch(`http://127.0.0.1:${port}/admin/v1/organizations/${randomUUID()}`, {
      headers: { authorization: `Bearer ${token}` }
    })
  ).status

describe("start-up refusals: one line on stderr, status 1, nothing written", () => {
  it("a bad configuration value names the variable", async () => {
    await expectRefused(
      await start({ PORT: "99999", SMS_DATA_DIR: join(temp, "never") }),
      /^configuration error: PORT must be an integer/
    )
    expect(existsSync(join(temp, "never"))).toBe(false)
  })

  it("a busy port is found before the data directory or the database is touched", async () => {
    const blocker: Server = await new Promise((done) => {
      const server = createServer().listen(0, "127.0.0.1", () => done(server))
    })
    const port = (blocker.address() as { port: number }).port
    const dataDir = join(temp, "busy-port")
    try {
      await expectRefused(
        await start({ PORT: String(port), SMS_DATA_DIR: dataDir }),
        new RegExp(`^cannot start: cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use`)
      )
    } finally {
      blocker.close()
    }
    expect(existsSync(dataDir)).toBe(false)
  })

  it.each([
    ["under /proc (Node's own mkdir would spin forever)", "/proc/nope/data"],
    ["a file, not a directory", "FILE"]
  ])("SMS_DATA_DIR %s", async (_name, dir) => {
    const dataDir = dir === "FILE" ? join(temp, "a-file") : dir
    if (dir === "FILE") writeFileSync(dataDir, "not a directory")
    await expectRefused(
      await start({ SMS_DATA_DIR: dataDir }),
      new RegExp(`^cannot start: SMS_DATA_DIR ${dataDir} cannot be used: `)
    )
  })
})

describe("one process per data directory", () => {
  const dataDir = join(temp, "shared")
  let first: Started

  afterAll(async () => {
    if (first !== undefined && first.child.exitCode === null) await stop(first)
  })

  it("a second process on the same data directory stops with one line naming the first one's pid", async () => {
    first = await start({ SMS_DATA_DIR: dataDir })
    await first.waitFor("API docs")
    // the demo key holds every permission, named from the list (never a count written by hand)
    expect(first.output().stdout).toContain(`Demo API key (every permission: ${Permissions.join(", ")}; shown once`)
    expect(readFileSync(join(dataDir, lockFileName), "utf8").trim()).toBe(String(first.child.pid))
    await expectRefused(
      await start({ SMS_DATA_DIR: dataDir }),
      new RegExp(`^cannot start: SMS_DATA_DIR ${dataDir} is in use by another process \\(pid ${first.child.pid}\\)`)
    )
    // the first one is untouched and still serves
    expect((await fetch(`http://127.0.0.1:${first.port}/health`)).status).toBe(200)
  })

  it("SIGTERM stops it cleanly: status 0, lock released", async () => {
    expect(await stop(first)).toBe(0)
    expect(existsSync(join(dataDir, lockFileName))).toBe(false)
  })

  it("a lock left by a process that is gone (kill -9) is taken over", async () => {
    const gone = spawnSync(node, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" })
    writeFileSync(join(dataDir, lockFileName), `${gone.stdout}\n`)
    const next = await start({ SMS_DATA_DIR: dataDir })
    await next.waitFor("API docs")
    expect(readFileSync(join(dataDir, lockFileName), "utf8").trim()).toBe(String(next.child.pid))
    expect(await stop(next)).toBe(0)
  })
})

/** Starts twice on the same database; the token printed by the first start must still open the operator API after the restart. */
const tokenSurvivesRestart = async (env: Record<string, string>) => {
  const first = await start(env)
  await first.waitFor("API docs")
  const token = /^ {2}(sms_admin_\S+)$/m.exec(first.output().stdout)?.[1]
  expect(token, first.output().stdout).toBeDefined()
  expect(await operatorCall(first.port, token!)).toBe(404)
  expect(await stop(first)).toBe(0)

  const second = await start(env)
  await second.waitFor("API docs")
  const { stdout } = second.output()
  expect(stdout).not.toMatch(/sms_admin_|svc_sms_/)
  expect(stdout).toContain(
    "the one printed at the first start on this database still holds (set SMS_ADMIN_TOKEN to choose one)"
  )
  expect(await operatorCall(second.port, token!)).toBe(404)
  expect(await operatorCall(second.port, "sms_admin_not-the-token-at-all")).toBe(401)
  expect(await stop(second)).toBe(0)

  // SMS_ADMIN_TOKEN chooses another token: the generated one no longer opens the API
  const chosen = "chosen-operator-token-0123456789"
  const third = await start({ ...env, SMS_ADMIN_TOKEN: chosen })
  await third.waitFor("API docs")
  expect(third.output().stdout).toContain("Operator token: SMS_ADMIN_TOKEN.")
  expect(await operatorCall(third.port, chosen)).toBe(404)
  expect(await operatorCall(third.port, token!)).toBe(401)
  expect(await stop(third)).toBe(0)
}

describe("the generated operator token survives a restart", () => {
  it("of the same embedded data directory", async () => {
    await tokenSurvivesRestart({ SMS_DATA_DIR: join(temp, "token") })
  })

  it.skipIf(!process.env.DATABASE_URL)("of the same PostgreSQL database (runs only with DATABASE_URL)", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const url = await Effect.runPromise(Scope.provide(scratchDatabaseUrl("startup"), scope))
      await tokenSurvivesRestart({ DATABASE_URL: url! })
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
