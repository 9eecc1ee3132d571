/**
 * The fleet's bind slots of an SMSC entry (src/provider/smpp/BindSlots.ts): each store is one
 * process. At most `binds` processes hold a slot of a route at once; a holder renews its own;
 * a slot whose lease ran out (its holder died: the lease is moved into the past here, rather
 * than waited for) or that its holder gave up goes to the next process that asks; routes are
 * independent. The gate of a process says which slot it holds, for /ready and the claim.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { BindSlotStore, makeBindGate } from "../../../src/provider/smpp/BindSlots.ts"
import { backend, makeTestApp } from "../../support/TestApp.ts"

const app = makeTestApp({ label: "bind_slots" })
afterAll(() => app.dispose())

/** A store of its own: another process. */
const process = () => app.run(Effect.gen(function*() {
  return yield* BindSlotStore
}).pipe(Effect.provide(BindSlotStore.layer)))

/** Ends the lease of `holder`'s slots of `route` now, as if it had died a while ago. */
const expire = (route: string, holder: string) =>
  app.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE smpp_bind_slots SET lease_until = now() - interval '1 second' WHERE route = ${route} AND holder = ${holder}`
  }))

describe(`bind slots of an SMSC entry (${backend})`, () => {
  it("binds 1: one holder at a time, renewed by it; a dead holder's slot goes to the next process that asks", async () => {
    const [a, b, c] = [await process(), await process(), await process()]
    expect(await app.run(a.hold("one", 1))).toBe(0)
    expect(await app.run(b.hold("one", 1)), "held by a").toBeUndefined()
    expect(await app.run(a.hold("one", 1)), "renewed by its holder").toBe(0)
    expect(await app.run(c.hold("one", 1)), "still held by a").toBeUndefined()

    await expire("one", a.holder)
    expect(await app.run(b.hold("one", 1)), "a's lease ran out").toBe(0)
    expect(await app.run(a.hold("one", 1)), "a, back, finds it taken").toBeUndefined()
    expect(await app.run(c.hold("one", 1))).toBeUndefined()
  })

  it("binds 2: two holders at once, a third waits; a slot given up is taken at once; routes are independent", async () => {
    const [a, b, c] = [await process(), await process(), await process()]
    const held = [await app.run(a.hold("two", 2)), await app.run(b.hold("two", 2)), await app.run(c.hold("two", 2))]
    expect(held).toEqual([0, 1, undefined])
    expect(await app.run(c.hold("other", 1)), "another route's slot").toBe(0)

    await app.run(a.release("two"))
    expect(await app.run(c.hold("two", 2)), "a gave its slot up").toBe(0)
    expect(await app.run(a.hold("two", 2))).toBeUndefined()
  })

  it("a gate takes a slot when it runs, says which it holds, and gives it up when it closes", async () => {
    const [a, b] = [await process(), await process()]
    const gateA = makeBindGate(a, "gate", 1)
    const gateB = makeBindGate(b, "gate", 1)
    expect({ a: gateA.slot(), b: gateB.slot() }, "before they run").toEqual({ a: undefined, b: undefined })
    await app.run(Effect.gen(function*() {
      yield* Effect.forkChild(gateA.run)
      yield* gateA.awaitHeld
    }))
    expect({ a: gateA.slot(), b: gateB.slot(), slots: gateA.slots }).toEqual({ a: 0, b: undefined, slots: 1 })
    expect(await app.run(b.hold("gate", 1)), "held by a's gate").toBeUndefined()
    await app.run(gateA.close)
    expect(gateA.slot(), "closed").toBeUndefined()
    await app.run(Effect.gen(function*() {
      yield* Effect.forkChild(gateB.run)
      yield* gateB.awaitHeld
    }))
    expect(gateB.slot(), "given up by a: b's gate takes it").toBe(0)
    await app.run(gateB.close)
  })
})
