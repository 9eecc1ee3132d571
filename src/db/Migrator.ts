/**
 * Applies the numbered migrations of `migrations/` (one file each) that a database lacks, in order, with
 * effect/sql's Migrator (its table `effect_sql_migrations`), in one transaction under an advisory
 * lock: two processes starting at once against one PostgreSQL apply each migration exactly once.
 *
 * The Migrator alone locks its table (LOCK TABLE ... ACCESS EXCLUSIVE), but only once it exists,
 * and a database created by the previous migrator (its table `schema_migrations`) must have its
 * versions copied over before the Migrator looks: the advisory lock covers both steps.
 * `@effect/sql-pg`'s PgMigrator is the same Migrator plus a `pg_dump` of the schema, which the
 * service does not need.
 */
import { Effect } from "effect"
import { Migrator, SqlClient, SqlError } from "effect/sql"
import { migrations } from "./migrations/index.ts"

const lockKey = 7_261_300_001 // the previous migrator's key too: an older process starting at the same moment waits as well
const table = "effect_sql_migrations"
const legacyTable = "schema_migrations"

const run = Migrator.make({})

/** Every numbered migration as the Migrator loads it (`<version>_<name>`): its statements, then its log line. */
const loader = Migrator.fromRecord(
  Object.fromEntries(
    migrations.map((m) => [
      `${m.version}_${m.name}`,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        for (const statement of m.statements) yield* sql.unsafe(statement)
        yield* Effect.logInfo("migration applied").pipe(Effect.annotateLogs({ version: m.version, name: m.name }))
      })
    ])
  )
)

/**
 * The versions the previous migrator applied count as applied: copied once, as the Migrator's
 * table is created (a run with nothing to apply creates it as the Migrator wants it).
 * `schema_migrations` is left as it is, for a previous release started against the database.
 */
const adoptLegacyVersions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [found] = yield* sql<{ readonly legacy: boolean; readonly current: boolean }>`
    SELECT to_regclass(${legacyTable}) IS NOT NULL AS legacy, to_regclass(${table}) IS NOT NULL AS current`
  if (found === undefined || !found.legacy || found.current) return
  yield* run({ loader: Effect.succeed([]), table })
  yield* sql`INSERT INTO ${sql(table)} (migration_id, name, created_at)
    SELECT version, name, applied_at FROM ${sql(legacyTable)}`
})

/** Brings the schema up to the latest migration; a no-op when it already is. */
export const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* Effect.gen(function* () {
    yield* sql`SELECT pg_advisory_xact_lock(${lockKey})`
    yield* adoptLegacyVersions
    yield* run({ loader, table })
  }).pipe(sql.withTransaction)
}).pipe(
  // a failed statement stays the database's failure, so that the start-up line names it
  Effect.catchTag("MigrationError", (error) => Effect.fail(SqlError.isSqlError(error.cause) ? error.cause : error)),
  Effect.withSpan("migrate")
)
