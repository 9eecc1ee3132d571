/**
 * Two service processes (`node src/main.ts`) started at the same moment on one fresh PostgreSQL
 * database: both serve, and each migration is applied exactly once between them (one
 * "migration applied" line per version across both outputs). Without DATABASE_URL it is
 * skipped, and the skipped block's name says why: an embedded database belongs to one process.
 */
import { afterAll, describe, expect, it } from "vitest"
import { migrations } from "../../src/db/migrations/index.ts"
import { createScratchDatabase } from "../support/ScratchDatabase.ts"
import { killAll, serve, type Served } from "../support/ServedProcess.ts"

const databaseUrl = process.env.DATABASE_URL

/** The versions a process logged as applied. */
const appliedBy = (served: Served): ReadonlyArray<number> =>
  served.started
    .output()
    .stdout.split("\n")
    .filter((line) => line.includes('"migration applied"'))
    .map((line) => (JSON.parse(line) as { annotations: { version: number } }).annotations.version)

describe.skipIf(!databaseUrl)("needs PostgreSQL (set DATABASE_URL; two service processes on one database)", () => {
  const drops: Array<() => Promise<void>> = []
  afterAll(async () => {
    await killAll()
    for (const drop of drops) await drop()
  })

  it("two processes starting at once on a fresh database apply each migration exactly once, and both serve", async () => {
    const scratch = await createScratchDatabase("migrate_twice")
    drops.push(scratch.drop)
    const env = { DATABASE_URL: scratch.url, LOG_LEVEL: "info", SMS_SCHEDULER_ENABLED: "false" }
    const both = await Promise.all([serve(env), serve(env)])
    expect(both.flatMap(appliedBy).sort((a, b) => a - b)).toEqual(migrations.map((m) => m.version))
    for (const served of both) expect((await served.call("GET", "/ready")).status).toBe(200)
  })
})
