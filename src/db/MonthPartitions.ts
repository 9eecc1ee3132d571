/**
 * What the tables partitioned by UTC month share (the ledger journal `credit_entries`, by the
 * time of its entries; `messages`, by the time in its ids): the months a process makes ahead,
 * once per month, and the drop of a past month's partition, which locks the whole table.
 */
import { Effect, Ref } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { inTransaction } from "./Transaction.ts"

/** How many months after this one have their partitions made ahead. */
export const monthsAhead = 2

/**
 * Longest a partition's drop waits for its lock (DROP locks the whole partitioned table, and
 * every statement on it queues behind a waiting DROP): beyond it the drop is left for the next round.
 */
export const partitionLockMs = 100

/** A UTC month as YYYYMM, the suffix of its partitions' names. */
export const monthOf = (at: Date) => `${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, "0")}`

/**
 * `prepare` (making the partitions of the month of its date and of the `monthsAhead` next ones),
 * run once per month and process: they exist from then on. The first run is at once.
 */
export const makeMonthlyPreparation = (prepare: (at: Date) => Effect.Effect<void, DatabaseUnavailable>) =>
  Effect.map(Ref.make<string | undefined>(undefined), (preparedFor) => (at: Date) =>
    Effect.gen(function*() {
      // Stryker disable next-line ConditionalExpression: equivalent, making partitions that exist does nothing (the statement is saved)
      if ((yield* Ref.get(preparedFor)) === monthOf(at)) return
      yield* prepare(at)
      yield* Ref.set(preparedFor, monthOf(at))
    }))

/**
 * Drops `partition` of `parent` in a transaction of its own that first locks `parent` whole
 * (waiting at most `partitionLockMs`: nothing writes the partition between the check and the
 * drop), then looks again with `stillDroppable`, then runs `beforeDrop`. True when dropped; false
 * when the lock was not had in time or the partition is no longer droppable.
 */
export const dropPartitionLocked = (
  sql: SqlClient.SqlClient,
  parent: string,
  partition: string,
  stillDroppable: Effect.Effect<boolean, SqlError.SqlError>,
  beforeDrop: Effect.Effect<void, SqlError.SqlError> = Effect.void
): Effect.Effect<boolean, SqlError.SqlError> =>
  Effect.gen(function*() {
    yield* sql`SELECT set_config('lock_timeout', ${`${partitionLockMs}ms`}, true)`
    yield* sql`LOCK TABLE ${sql(parent)} IN ACCESS EXCLUSIVE MODE`
    if (!(yield* stillDroppable)) return false
    yield* beforeDrop
    yield* sql`DROP TABLE ${sql(partition)}`
    return true
  }).pipe(
    inTransaction(sql),
    Effect.catchTag("SqlError", (e) => e.reason._tag === "LockTimeoutError" ? Effect.succeed(false) : Effect.fail(e))
  )

/** The partitions of `parent` named `<prefix>YYYYMM` for months before `before`'s, oldest first. */
export const pastPartitions = (sql: SqlClient.SqlClient, parent: string, prefix: string, before: Date) =>
  sql<{ name: string }>`SELECT c.relname::text AS name FROM pg_inherits AS i
    JOIN pg_class AS c ON c.oid = i.inhrelid
    WHERE i.inhparent = ${parent}::regclass
      AND c.relname LIKE ${prefix + "%"} AND c.relname < ${prefix + monthOf(before)}
    ORDER BY 1`.pipe(Effect.map((rows) => rows.map((r) => r.name)))
