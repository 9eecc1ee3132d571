/**
 * Applies the numbered migrations of `migrations.ts` that a database lacks, in order, in one
 * transaction under an advisory lock: two processes starting at once against one PostgreSQL
 * apply each migration exactly once.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { migrations } from "./migrations.ts"

const lockKey = 7_261_300_001 // any constant; shared by every process of this service

/** Brings the schema up to the latest migration; a no-op when it already is. */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${lockKey})`
    yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`
    const applied = yield* sql<{ version: number }>`SELECT version FROM schema_migrations`
    const done = new Set(applied.map((r) => r.version))
    for (const m of migrations) {
      if (done.has(m.version)) continue
      for (const statement of m.statements) yield* sql.unsafe(statement)
      yield* sql`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`
      yield* Effect.logInfo("migration applied").pipe(Effect.annotateLogs({ version: m.version, name: m.name }))
    }
  }).pipe(sql.withTransaction)
}).pipe(Effect.withSpan("migrate"))
