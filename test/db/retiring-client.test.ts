/**
 * The service's PostgreSQL client (src/db/RetiringClient.ts) against the suite's database (the
 * embedded PGlite, or DATABASE_URL's PostgreSQL): a session whose server refuses a write because
 * it cannot take one (25006) is retired, and the next statement runs on a new session; any other
 * failure leaves the session in the pool; a session to a server that cannot take writes never
 * serves (its statements fail as the database unavailable, naming why), and `/ready`'s database
 * check says so. A session is made read-only with `default_transaction_read_only`, its own
 * setting: nothing outside it changes. Those two need PostgreSQL: PGlite's socket connections
 * share its one backend, so none of them can be read-only alone.
 */
import { Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { DatabaseHealth } from "../../src/db/DatabaseHealth.ts"
import { isDatabaseUnavailable } from "../../src/db/DatabaseUnavailable.ts"
import { embeddedServer } from "../../src/db/Embedded.ts"
import { retiringClientLayer } from "../../src/db/RetiringClient.ts"
import { isConnectionFailure, isReadOnlyServer } from "../../src/db/SqlErrors.ts"
import { fromDatabase } from "../../src/db/Statements.ts"
import { backend } from "../support/TestApp.ts"

/** A client of one session at a time (no multiplexing), so that a statement runs where the one before it ran. */
const oneSession = (startupParameters: Record<string, string> = {}) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const url = process.env.DATABASE_URL
      const target = url
        ? { url: Redacted.make(url) }
        : { ...(yield* embeddedServer("memory://")), username: "postgres", database: "postgres" }
      return retiringClientLayer({ ...target, maxConnections: 1, startupParameters })
    })
  )

const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>, startupParameters?: Record<string, string>) =>
  Effect.runPromise(Effect.scoped(effect.pipe(Effect.provide(oneSession(startupParameters)))))

/** `/ready`'s database check over the client. */
const healthState = Effect.provide(
  Effect.gen(function* () {
    return yield* (yield* DatabaseHealth).state
  }),
  DatabaseHealth.layer
)

const backendPid = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
).pipe(Effect.map(([row]) => row!.pid))

describe(`the service's client on ${backend}`, () => {
  it("keeps a session whose statement failed for any other reason; /ready's check finds the database writable", async () => {
    const seen = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const before = yield* backendPid
        const failed = yield* Effect.exit(sql`SELECT * FROM no_such_table_here`)
        return { before, failed, after: yield* backendPid, health: yield* healthState }
      })
    )
    expect(Exit.isFailure(seen.failed)).toBe(true)
    expect(seen.after, "the same session").toBe(seen.before)
    expect(seen.health).toEqual({ _tag: "Writable" })
  })
})

describe.skipIf(!process.env.DATABASE_URL)(
  "the service's client on a session that cannot take writes (needs DATABASE_URL: PGlite's connections share one backend)",
  () => {
    it("retires a session whose server refused a write (25006): the next statement runs on a new, writable session", async () => {
      const seen = await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const before = yield* backendPid
          yield* sql`SET default_transaction_read_only = on`
          const refused = yield* Effect.flip(fromDatabase(sql`CREATE TEMPORARY TABLE retiring_probe (i integer)`))
          const after = yield* backendPid
          const [setting] = yield* sql<{
            value: string
          }>`SELECT current_setting('default_transaction_read_only') AS value`
          return { before, after, refused, setting: setting!.value }
        })
      )
      expect(isDatabaseUnavailable(seen.refused), "the refused write is the database unavailable").toBe(true)
      expect(seen.after, "a new session").not.toBe(seen.before)
      expect(seen.setting, "the new session is writable").toBe("off")
    })

    it("never serves on a session to a server that cannot take writes; /ready's check names why", async () => {
      const seen = await run(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const read = yield* Effect.flip(sql`SELECT 1 AS one`)
          const health = yield* healthState
          return { read, health }
        }),
        { default_transaction_read_only: "on" }
      )
      expect(isConnectionFailure(seen.read), "the database unavailable").toBe(true)
      expect(isReadOnlyServer(seen.read)).toBe(true)
      expect(String(seen.read.reason.message)).toContain("transaction_read_only is on")
      expect(seen.health).toEqual({
        _tag: "ReadOnly",
        why: "transaction_read_only is on"
      })
    })
  }
)
