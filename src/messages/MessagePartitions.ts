/**
 * Upkeep of the monthly partitions of `messages` (migration 18: by the month in the message's
 * time-ordered id). The partitions of this month and the next `monthsAhead` are made before an id
 * of theirs is, and a past month is retired once retention has erased every one of its messages:
 * they are packed (PackedMessages.ts), a set of at most `retireSetMax` a transaction, then the
 * emptied partition is dropped in one statement. A month is past one day after its end, so that
 * a process whose clock lags makes no id of a retired month. A month holding a message not erased
 * (an organisation that keeps its messages, one still in flight) stays as it is.
 *
 * Run when the layer is built (before the service answers), by the retention loop of any process,
 * and by every step of the test clock. Processes may run it at once: a partition is made under an
 * advisory lock, a month is packed by one process at a time, and its drop looks again under the
 * lock of the whole table. Making and dropping wait at most `partitionLockMs` for their locks.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { now } from "../clock/Time.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import {
  dropPartitionLocked,
  makeMonthlyPreparation,
  makePartitions,
  monthsAhead,
  pastPartitions
} from "../db/MonthPartitions.ts"
import { fromDatabase } from "../db/Statements.ts"
import { inTransaction } from "../db/Transactions.ts"
import { finalStatuses } from "../domain/MessageStatus.ts"
import { packedFragments } from "./PackedMessages.ts"

/** Most messages one retirement set packs (one statement, one transaction). */
export const retireSetMax = 2_048

/** How long after its month's end a partition may be retired. */
export const retireAfterMs = 86_400_000

const partitionPrefix = "messages_p"

const finalList = finalStatuses.map((s) => `'${s}'`).join(", ")

export class MessagePartitions extends Context.Service<
  MessagePartitions,
  {
    /**
     * Makes the partitions ahead (once per month and process), then does one step of retirement:
     * packs a set of a past month whose messages are all erased, or drops such a month emptied;
     * returns the messages packed and partitions dropped (0 when there was nothing to do).
     */
    readonly upkeep: Effect.Effect<number, DatabaseUnavailable>
  }
>()("sms/MessagePartitions") {
  static readonly layer = Layer.effect(
    MessagePartitions,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const packed = packedFragments(sql)

      const prepare = yield* makeMonthlyPreparation("messages", (at) =>
        fromDatabase(
          makePartitions(
            sql,
            sql`SELECT sms_message_partition((date_trunc('month', ${at}::timestamptz AT TIME ZONE 'UTC')
            + make_interval(months => k))::date)
          FROM generate_series(0, ${monthsAhead}::integer) AS k`
          )
        )
      )

      /** Whether every message of the partition is erased (with its timeline in its row), over the partial indexes. */
      const allErased = (name: string) => {
        const p = sql(name)
        return sql<{ erased: boolean }>`SELECT NOT (
          EXISTS (SELECT 1 FROM ${p} WHERE status = 'scheduled') OR EXISTS (SELECT 1 FROM ${p} WHERE status = 'processing')
          OR EXISTS (SELECT 1 FROM ${p} WHERE status = 'accepted') OR EXISTS (SELECT 1 FROM ${p} WHERE status = 'unknown')
          OR EXISTS (SELECT 1 FROM ${p} WHERE erased_at IS NULL AND status IN (${sql.literal(finalList)}))
          OR EXISTS (SELECT 1 FROM ${p} WHERE timeline IS NULL AND status IN (${sql.literal(finalList)}))) AS erased`.pipe(
          Effect.map((rows) => rows[0]!.erased)
        )
      }

      const isEmpty = (name: string) =>
        sql<{ empty: boolean }>`SELECT NOT EXISTS (SELECT 1 FROM ${sql(name)}) AS empty`.pipe(
          Effect.map((rows) => rows[0]!.empty)
        )

      /** One set of the partition packed, by one process at a time (another packing it: 0). */
      const packSet = (name: string, at: Date) =>
        Effect.gen(function* () {
          const [mine] = yield* sql<{
            mine: boolean
          }>`SELECT pg_try_advisory_xact_lock(hashtext(${`messages_retire:${name}`})) AS mine`
          if (mine?.mine !== true) return 0
          const [result] = yield* packed.pack(name, retireSetMax, at)
          return result?.packed ?? 0
        }).pipe(inTransaction(sql))

      const retireStep = (at: Date) =>
        Effect.gen(function* () {
          for (const name of yield* pastPartitions(
            sql,
            "messages",
            partitionPrefix,
            new Date(at.getTime() - retireAfterMs)
          )) {
            if (!(yield* allErased(name))) continue
            const n = yield* packSet(name, at)
            if (n > 0) return n
            if (!(yield* isEmpty(name))) continue
            if (yield* dropPartitionLocked(sql, "messages", name, isEmpty(name))) {
              // Stryker disable next-line StringLiteral: a log line, not behaviour
              yield* Effect.logInfo(
                `messages: the month ${name.slice(partitionPrefix.length)} packed, its partition dropped`
              )
              return 1
            }
          }
          return 0
        }).pipe(fromDatabase)

      yield* Effect.flatMap(now, prepare)
      return MessagePartitions.of({
        upkeep: Effect.gen(function* () {
          const at = yield* now
          yield* prepare(at)
          return yield* retireStep(at)
        }).pipe(Effect.withSpan("MessagePartitions.upkeep"))
      })
    })
  )
}
