/**
 * The group commit's sets (src/db/GroupCommit.ts): items handed in together run as one set; a set
 * that fails for any reason but a transient one runs again item by item, so only the offending
 * item's caller fails; a transient failure fails (or retries) the set as a whole, never item by item.
 */
import { Deferred, Effect, Exit, Fiber } from "effect"
import { SqlError } from "effect/sql"
import { describe, expect, it } from "vitest"
import { DatabaseUnavailable } from "../../src/db/DatabaseUnavailable.ts"
import { makeGroupCommit } from "../../src/db/GroupCommit.ts"

class BadItem extends Error {}

const connectionLost = () =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: new Error("Connection closed"),
      message: "connection lost",
      operation: "set"
    })
  })

/** Hands `items` in while the first set is held, so all but the first gather into one set; returns each caller's exit and the sets run. */
const runAll = <E>(
  items: ReadonlyArray<string>,
  runSet: (set: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>, E>
) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sets: Array<ReadonlyArray<string>> = []
        const gate = yield* Deferred.make<void>()
        const commit = yield* makeGroupCommit<string, string, E, never>({
          name: "test",
          maxSize: 100,
          runSet: (set) =>
            Effect.gen(function* () {
              sets.push(set)
              if (set[0] === "first") yield* Deferred.await(gate)
              return yield* runSet(set)
            })
        })
        const first = yield* Effect.forkChild(commit("first"))
        for (let turn = 0; sets.length === 0; turn++) {
          if (turn > 1000) return yield* Effect.die(new Error("the first set never ran"))
          yield* Effect.yieldNow
        }
        const rest = yield* Effect.forEach(items, (item) => Effect.forkChild(Effect.exit(commit(item))))
        yield* Effect.yieldNow
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(first)
        return { exits: yield* Effect.forEach(rest, Fiber.join), sets }
      })
    )
  )

describe("group commit", () => {
  it("runs a set item by item when one bad item fails it: only that item's caller fails", async () => {
    const items = ["a", "b", "bad", "c", "d"]
    const { exits, sets } = await runAll(items, (set) =>
      set.includes("bad")
        ? Effect.fail(new BadItem("a data error in the set"))
        : Effect.succeed(set.map((x) => x.toUpperCase()))
    )
    expect(exits.map((e) => (Exit.isSuccess(e) ? e.value : "failed"))).toEqual(["A", "B", "failed", "C", "D"])
    // the gathered set, then each of its items alone
    expect(sets).toEqual([["first"], items, ["a"], ["b"], ["bad"], ["c"], ["d"]])
  })

  it("fails a whole set on a transient failure (the database unreachable) without running its items one by one", async () => {
    const items = ["a", "b", "c"]
    const { exits, sets } = await runAll(items, (set) =>
      set[0] === "first" ? Effect.succeed(["1"]) : Effect.fail(connectionLost())
    )
    expect(exits.every(Exit.isFailure)).toBe(true)
    expect(sets).toEqual([["first"], items])
  })

  it("fails a whole set on the database unavailable as the stores report it (DatabaseUnavailable), without running its items one by one", async () => {
    const items = ["a", "b", "c"]
    const { exits, sets } = await runAll(items, (set) =>
      set[0] === "first" ? Effect.succeed(["1"]) : Effect.fail(new DatabaseUnavailable(connectionLost()))
    )
    expect(exits.every(Exit.isFailure)).toBe(true)
    expect(sets).toEqual([["first"], items])
  })
})
