/**
 * A COMMIT waiting for the synchronous standby is never cancelled by a timeout of the service's
 * (docs/failover.md). PostgreSQL writes a commit record, then waits for the standby to confirm
 * it; a cancelled wait (a client's cancel request, as a driver sends for an interrupted
 * statement) only draws a WARNING and makes the transaction visible on the primary alone,
 * acknowledged without its copy, and a failover then loses it. (statement_timeout never cancels
 * it: PostgreSQL disarms it before the commit.) On the suite's own PostgreSQL, whose synchronous
 * standby never comes, so that every commit waits until the test lets it go:
 *
 * - control: a plain client (@effect/sql-pg's PgClient, one connection) whose INSERT is under an
 *   `Effect.timeout` of 200 ms cancels the wait: the server warns, and the row is visible while
 *   unreplicated, which is what the checks below would see;
 * - the service's client (src/db/Database.ts, Transactions.ts): a transaction under an
 *   `Effect.timeout` of 200 ms, a transaction whose fiber is interrupted while its COMMIT waits,
 *   and a statement outside a transaction under an `Effect.timeout` of 200 ms. For a second and a
 *   half, more than seven times those timeouts, the three sessions still wait for the standby and
 *   no row of theirs is visible; once the standby requirement is lifted, all three commit, and
 *   the server warned of no other cancelled wait.
 */
import { Duration, Effect, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { layerConfig } from "../../src/config/Config.ts"
import { DatabaseClient } from "../../src/db/Database.ts"
import { Transactions } from "../../src/db/Transactions.ts"
import { eventually } from "../support/Eventually.ts"
import { testConfig } from "../support/TestApp.ts"
import { withDatabase } from "./support/Outcomes.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"

const postgres = useThrowawayPostgres("faults-commit-wait")

const cancelledWait = "canceling wait for synchronous replication"
const observedMs = 1_500

/** One statement over a connection of the test's own (the role's statement_timeout applies to it). */
const admin = <A extends object = never>(text: string) =>
  withDatabase(
    postgres().url,
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text))
  )

const visibleRows = async () => (await admin<{ n: number }>("SELECT count(*)::integer AS n FROM commit_probe"))[0]!.n
const waitingForStandby = async () =>
  (
    await admin<{ n: number }>(
      "SELECT count(*)::integer AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND application_name = 'sms-service'"
    )
  )[0]!.n
/** Lifts the standby requirement: every commit waiting for it completes. */
const releaseStandby = Effect.promise(async () => {
  await admin("ALTER SYSTEM RESET synchronous_standby_names")
  await admin("SELECT pg_reload_conf()")
})
const cancelledWaits = () => postgres().log().split(cancelledWait).length - 1

describe("a COMMIT waiting for the synchronous standby", () => {
  it("is not cancelled by the service's timeouts or interruptions, while a plain client's timeout cancels it", async () => {
    await admin("CREATE TABLE commit_probe (id integer)")
    await admin("ALTER SYSTEM SET synchronous_standby_names = 'absent_standby'")
    await admin("SELECT pg_reload_conf()")
    await eventually(
      () => admin<{ s: string }>("SELECT current_setting('synchronous_standby_names') AS s"),
      (rows) => rows[0]?.s === "absent_standby",
      {
        timeoutMs: 10_000,
        what: "the primary waiting for a synchronous standby"
      }
    )

    // control: the plain client's timeout cancels the wait; the row shows, unreplicated
    const control = await withDatabase(
      postgres().url,
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.exit(Effect.timeout(sql`INSERT INTO commit_probe VALUES (0)`, Duration.millis(200)))
      )
    )
    expect(control._tag, "the control timed out").toBe("Failure")
    expect(await visibleRows(), "the control's row, visible although no standby has it").toBe(1)
    expect(cancelledWaits(), "the server's warning of the control's cancelled wait").toBe(1)

    const service = Layer.provideMerge(Transactions.layer, DatabaseClient).pipe(
      Layer.provide(layerConfig(testConfig({ databaseUrl: Redacted.make(postgres().url) })))
    )
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { transaction } = yield* Transactions
          const insert = (id: number) => transaction(sql`INSERT INTO commit_probe VALUES (${id})`)
          // one after the other: a transaction waits for whatever already holds the connection it drew
          const waiting = (n: number) =>
            Effect.promise(() =>
              eventually(waitingForStandby, (w) => w === n, {
                timeoutMs: 10_000,
                what: `${n} commits waiting for the standby`
              })
            )
          const timedOut = yield* Effect.forkChild(insert(1).pipe(Effect.timeout(Duration.millis(200)), Effect.exit))
          yield* waiting(1)
          const interrupted = yield* Effect.forkChild(Effect.exit(insert(2)))
          yield* waiting(2)
          // outside a transaction: the caller is freed at its timeout, the statement goes on
          const alone = yield* Effect.exit(
            Effect.timeout(sql`INSERT INTO commit_probe VALUES (3)`, Duration.millis(200))
          )
          expect(alone._tag, "the statement's caller timed out").toBe("Failure")
          yield* waiting(3)
          // not awaited: the interruption waits for the COMMIT, which waits for the standby
          yield* Effect.forkChild(Fiber.interrupt(interrupted))

          const deadline = Date.now() + observedMs
          const seen: Array<{ readonly waiting: number; readonly visible: number }> = []
          while (Date.now() < deadline) {
            seen.push({
              waiting: yield* Effect.promise(waitingForStandby),
              visible: yield* Effect.promise(visibleRows)
            })
            yield* Effect.sleep(Duration.millis(100))
          }
          expect(seen.length).toBeGreaterThan(5)
          expect(
            seen.filter((s) => s.waiting !== 3 || s.visible !== 1),
            "a commit cancelled: its session stopped waiting, or its row showed"
          ).toEqual([])

          yield* releaseStandby
          yield* Fiber.join(timedOut)
          yield* Fiber.await(interrupted)
          // the waits are let go before the client closes, even when a check above failed (its pool would wait for them)
        }).pipe(Effect.ensuring(releaseStandby), Effect.provide(service))
      )
    )

    await eventually(visibleRows, (n) => n === 4, {
      timeoutMs: 10_000,
      what: "the three rows committed once the standby requirement was lifted"
    })
    expect(cancelledWaits(), "cancelled waits: the control's alone").toBe(1)
  })
})
