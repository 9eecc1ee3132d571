/**
 * A transaction cut by a database outage: its statement fails and so does its ROLLBACK (the
 * connection is gone). effect/sql makes that a defect; `inTransaction` makes it the SqlError it
 * is, a failure that the settlement's retry (and every other retry of transient failures) sees.
 */
import { Context, Effect, Exit } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { describe, expect, it } from "vitest"
import { isTransient } from "../../src/db/SqlErrors.ts"
import { inTransaction } from "../../src/db/Transactions.ts"

const connectionLost = (operation: string) =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: new Error("Connection closed"),
      message: "connection lost",
      operation
    })
  })

/** effect/sql's own transaction machinery over a connection that is lost mid-transaction. */
const withTransaction = SqlClient.makeWithTransaction({
  transactionService: Context.Service<readonly [conn: "conn", counter: number]>("test/Transaction"),
  spanAttributes: [],
  acquireConnection: () => Effect.succeed("conn" as const),
  begin: () => Effect.void,
  savepoint: () => Effect.void,
  commit: () => Effect.void,
  rollback: () => Effect.fail(connectionLost("rollback")),
  rollbackSavepoint: () => Effect.void
})
const cut = Effect.fail(connectionLost("query"))

describe("a transaction whose ROLLBACK fails", () => {
  it("dies with effect/sql's withTransaction: no retry of failures sees it", async () => {
    const exit = await Effect.runPromiseExit(withTransaction(cut))
    expect(Exit.isFailure(exit) && exit.cause.reasons.every((r) => r._tag === "Die")).toBe(true)
  })

  it("fails with the ROLLBACK's SqlError through inTransaction: transient, so it is run again", async () => {
    let attempts = 0
    const body = Effect.suspend(() => (++attempts < 3 ? cut : Effect.succeed("settled")))
    const result = await Effect.runPromise(
      inTransaction({ withTransaction })(body).pipe(Effect.retry({ while: isTransient }))
    )
    expect({ result, attempts }).toEqual({ result: "settled", attempts: 3 })
  })

  it("still dies of a defect that is not a SqlError", async () => {
    const exit = await Effect.runPromiseExit(inTransaction({ withTransaction })(Effect.die(new Error("a bug"))))
    expect(Exit.isFailure(exit) && exit.cause.reasons.every((r) => r._tag === "Die")).toBe(true)
  })
})
