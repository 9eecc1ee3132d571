/**
 * What the tables partitioned by UTC month share (the ledger journal `credit_entries`, by the
 * time of its entries; `messages`, by the time in its ids): the months a process makes ahead,
 * once per month, and the drop of a past month's partition, which locks the whole table. Both
 * wait at most `partitionLockMs` for their locks (`withinLockWait`).
 */
import { Effect, Ref } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { inTransaction } from "./Transactions.ts"

/** How many months after this one have their partitions made ahead. */
export const monthsAhead = 2

/**
 * Longest a partition's creation or drop waits for a lock: beyond it, it is left for the next
 * round. Both take locks that every statement on the table queues behind while they wait: a drop
 * locks the whole partitioned table; a creation attaches the new partition, which locks the
 * default partition whole (it is scanned for rows of the new range), and any statement not
 * pruned to one month reads the default partition too.
 */
export const partitionLockMs = 100

/**
 * Runs `effect` in a transaction of its own whose every lock is waited for at most
 * `partitionLockMs`; when a lock is not had in time, its work is rolled back (to be tried again)
 * and the answer is `timedOut`.
 */
export const withinLockWait = <A>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, SqlError.SqlError>,
  timedOut: A
): Effect.Effect<A, SqlError.SqlError> =>
  sql`SELECT set_config('lock_timeout', ${`${partitionLockMs}ms`}, true)`.pipe(
    Effect.andThen(effect),
    inTransaction(sql),
    Effect.catchTag("SqlError", (e) =>
      e.reason._tag === "LockTimeoutError" ? Effect.succeed(timedOut) : Effect.fail(e)
    )
  )

/** `statement` (making partitions) run `withinLockWait`: true when it ran, false when a lock was not had in time. */
export const makePartitions = (sql: SqlClient.SqlClient, statement: Effect.Effect<unknown, SqlError.SqlError>) =>
  withinLockWait(sql, Effect.as(statement, true), false)

/** A UTC month as YYYYMM, the suffix of its partitions' names. */
export const monthOf = (at: Date) => `${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, "0")}`

/**
 * `prepare` (making the partitions of the month of its date and of the `monthsAhead` next ones;
 * false when a lock was not had in time), run once per month and process: they exist from then
 * on. The first run is at once; one that was not done is run again at the next call. Until a
 * month's partition is made, what belongs to it goes to the default partition, and moves into it
 * when it is made.
 */
export const makeMonthlyPreparation = (
  name: string,
  prepare: (at: Date) => Effect.Effect<boolean, DatabaseUnavailable>
) =>
  Effect.map(
    Ref.make<string | undefined>(undefined),
    (preparedFor) => (at: Date) =>
      Effect.gen(function* () {
        // Stryker disable next-line ConditionalExpression: equivalent, making partitions that exist does nothing (the statement is saved)
        if ((yield* Ref.get(preparedFor)) === monthOf(at)) return
        if (yield* prepare(at)) yield* Ref.set(preparedFor, monthOf(at))
        else
          yield* Effect.logInfo(
            `${name}: the partitions ahead not made, a lock was not had within ${partitionLockMs} ms; tried again at the next round`
          )
      })
  )

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
  withinLockWait(
    sql,
    Effect.gen(function* () {
      yield* sql`LOCK TABLE ${sql(parent)} IN ACCESS EXCLUSIVE MODE`
      if (!(yield* stillDroppable)) return false
      yield* beforeDrop
      yield* sql`DROP TABLE ${sql(partition)}`
      return true
    }),
    false
  )

/** The partitions of `parent` named `<prefix>YYYYMM` for months before `before`'s, oldest first. */
export const pastPartitions = (sql: SqlClient.SqlClient, parent: string, prefix: string, before: Date) =>
  sql<{ name: string }>`SELECT c.relname::text AS name FROM pg_inherits AS i
    JOIN pg_class AS c ON c.oid = i.inhrelid
    WHERE i.inhparent = ${parent}::regclass
      AND c.relname LIKE ${`${prefix}%`} AND c.relname < ${`${prefix}${monthOf(before)}`}
    ORDER BY 1`.pipe(Effect.map((rows) => rows.map((r) => r.name)))
