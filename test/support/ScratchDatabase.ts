/**
 * A PostgreSQL database of its own for a test file that runs the background work (backgroundLoopsLayer,
 * WorkSteps or the MessageQueueStore claims). Those queries are global across organisations, so on a
 * shared database the files, each under its own TestClock, would dispatch, verify or recover
 * each other's messages.
 *
 * With DATABASE_URL set, `scratchDatabaseUrl(label)` creates `<DATABASE_URL's db>_<label>_<pid>`
 * next to it and drops it (`WITH (FORCE)`) when the scope closes. Creating it fails loudly:
 * falling back to the shared database is what made these tests flaky. Without DATABASE_URL it
 * is undefined: the embedded PGlite is a database per file anyway.
 *
 * `testDatabaseLayer` is the plain test database both build on (here rather than in TestApp.ts,
 * which imports this file).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type AppConfigShape, layerConfig } from "../../src/config/Config.ts"
import { databaseLayer } from "../../src/db/Database.ts"
import { minimumLogLevel } from "../../src/observability/Logging.ts"

/** `<base>_<label>_<pid>`, the base cut short so that the name fits PostgreSQL's 63 bytes. */
const scratchDatabaseName = (baseUrl: string, label: string, pid = process.pid): string => {
  const base = decodeURIComponent(new URL(baseUrl).pathname.slice(1)) || "postgres"
  const suffix = `_${label}_${pid}`
  const name = `${base.slice(0, Math.max(1, 63 - suffix.length))}${suffix}`
  if (!/^[A-Za-z0-9_]{1,63}$/.test(name))
    throw new Error(`scratch database name ${JSON.stringify(name)} is not [A-Za-z0-9_]{1,63}`)
  return name
}

/** Runs one statement on the database of `url`, over a connection of its own. */
const statement = (url: string, text: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text)).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
  )

/** The innermost cause (the server's own message, e.g. `database "…" already exists`). */
const innermost = (e: unknown): unknown => (e instanceof Error && e.cause !== undefined ? innermost(e.cause) : e)

/** Scoped: the URL of a fresh database next to DATABASE_URL's, dropped with the scope; undefined without DATABASE_URL. */
export const scratchDatabaseUrl = (label: string) =>
  Effect.gen(function* () {
    const base = process.env.DATABASE_URL
    if (!base) return undefined
    const name = scratchDatabaseName(base, label)
    yield* Effect.acquireRelease(
      statement(base, `CREATE DATABASE "${name}"`).pipe(
        Effect.mapError(
          (e) =>
            new Error(`cannot create the scratch database ${name} next to DATABASE_URL's: ${innermost(e)}`, {
              cause: e
            })
        )
      ),
      () => statement(base, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).pipe(Effect.orDie)
    )
    const url = new URL(base)
    url.pathname = `/${name}`
    return url.toString()
  })

/**
 * databaseLayer with `config`, and its log level for what is built on it: nothing below it is
 * logged (a test's configuration says "error": no line per migration in every test file).
 */
export const testDatabaseLayer = (config: AppConfigShape) =>
  databaseLayer.pipe(Layer.provideMerge(layerConfig(config)), Layer.provideMerge(minimumLogLevel(config.logLevel)))

/** testDatabaseLayer, pointed at a scratch database when DATABASE_URL is set (the embedded one otherwise). */
export const scratchDatabaseLayer = (label: string, config: AppConfigShape) =>
  Layer.unwrap(
    Effect.map(scratchDatabaseUrl(label), (url) =>
      testDatabaseLayer(url === undefined ? config : { ...config, databaseUrl: Redacted.make(url) })
    )
  )

/**
 * A scratch database shared by several apps of one test (several "processes" on one database):
 * its URL, and a function that drops it. Requires DATABASE_URL.
 */
export const createScratchDatabase = async (
  label: string
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const scope = Effect.runSync(Scope.make())
  const url = await Effect.runPromise(scratchDatabaseUrl(label).pipe(Effect.provideService(Scope.Scope, scope)))
  if (url === undefined) throw new Error("createScratchDatabase needs DATABASE_URL")
  return { url, drop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
