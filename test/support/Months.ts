/** UTC months and monthly partitions, for the tests of the tables partitioned by month. */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { App } from "./TestApp.ts"
import { whileHolding } from "./WhileHeld.ts"

/** YYYYMM of the UTC month of `ms`, `ahead` months later. */
export const month = (ms: number, ahead = 0) => {
  const d = new Date(ms)
  const m = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + ahead, 1))
  return `${m.getUTCFullYear()}${String(m.getUTCMonth() + 1).padStart(2, "0")}`
}

/** The start of the UTC month `ahead` months after the one of `ms`. */
export const monthStart = (ms: number, ahead: number) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + ahead, 1)
}

/** The partitions of `table` (`p<YYYYMM>` and `default`, its name's prefix taken off), each with its rows. */
export const partitionsOf = (table: "messages" | "credit_entries") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ name: string; n: number }>`SELECT c.relname::text AS name, coalesce(r.n, 0)::integer AS n
      FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
      LEFT JOIN (SELECT tableoid, count(*) AS n FROM ${sql(table)} GROUP BY tableoid) AS r ON r.tableoid = c.oid
      WHERE i.inhparent = ${table}::regclass ORDER BY 1`
  ).pipe(Effect.map((rows) => Object.fromEntries(rows.map((r) => [r.name.replace(`${table}_`, ""), r.n]))))

/**
 * Moves the app's test clock into the next month `steps` times, checking each time that the
 * partitions of `table` of this month and the next two are there.
 */
export const expectMonthsMadeAhead = (table: "messages" | "credit_entries", steps: number) =>
  Effect.gen(function* () {
    const app = yield* App
    for (let step = 0; step < steps; step++) {
      yield* app.advanceTo(monthStart(yield* app.now, 1) + 60_000)
      const now = yield* app.now
      expect(Object.keys(yield* partitionsOf(table)), month(now)).toEqual(
        expect.arrayContaining([`p${month(now)}`, `p${month(now, 1)}`, `p${month(now, 2)}`, "default"])
      )
    }
  })

/**
 * Runs `effect` while another transaction holds the lock `lock` takes (PostgreSQL only: the
 * embedded database serves one connection at a time), then ends that transaction, or after 3 s
 * of real time (`whileHolding`).
 */
export const whileLocked = <A, E, R>(
  lock: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>,
  effect: Effect.Effect<A, E, R>
) => whileHolding(Effect.flatMap(SqlClient.SqlClient, lock), effect, 3_000).pipe(Effect.map(({ result }) => result))

/**
 * When the clock enters the next month, the partition it makes ahead of `table` is held back by
 * a reader of the table (its statement not pruned to one month: it reads the default partition,
 * which attaching a partition locks whole) and made at the next round, the reader gone.
 */
export const expectPartitionAheadYieldsToReaders = (table: "messages" | "credit_entries") =>
  Effect.gen(function* () {
    const app = yield* App
    const next = monthStart(yield* app.now, 1)
    const ahead = `p${month(next, 2)}`
    expect(Object.keys(yield* partitionsOf(table))).not.toContain(ahead)
    yield* app.moveClock(next + 60_000 - (yield* app.now))
    yield* whileLocked((sql) => sql`SELECT count(*) FROM ${sql(table)}`, app.advance(1_000))
    expect(Object.keys(yield* partitionsOf(table))).not.toContain(ahead)
    yield* app.advance(1_000)
    expect(Object.keys(yield* partitionsOf(table))).toContain(ahead)
  })
