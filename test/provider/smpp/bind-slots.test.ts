/**
 * The fleet's bind slots of an SMSC entry (src/provider/smpp/BindSlots.ts): each store is one
 * process. At most `binds` processes hold a slot of a route at once; a holder renews its own;
 * a slot whose lease ran out (its holder died: the lease is moved into the past here, rather
 * than waited for) or that its holder gave up goes to the next process that asks; routes are
 * independent. The gate of a process says which slot it holds, for /ready and the claim.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { BindSlotStore, makeBindGate } from "../../../src/provider/smpp/BindSlots.ts"
import { backend, withApp } from "../../support/TestApp.ts"

/** A store of its own: another process. */
const process = () =>
  Effect.gen(function* () {
    return yield* BindSlotStore
  }).pipe(Effect.provide(BindSlotStore.layer))

/** Ends the lease of `holder`'s slots of `route` now, as if it had died a while ago. */
const expire = (route: string, holder: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE smpp_bind_slots SET lease_until = now() - interval '1 second' WHERE route = ${route} AND holder = ${holder}`
  })

withApp({ label: "bind_slots" })(`bind slots of an SMSC entry (${backend})`, (it) => {
  it.effect(
    "binds 1: one holder at a time, renewed by it; a dead holder's slot goes to the next process that asks",
    () =>
      Effect.gen(function* () {
        const [a, b, c] = [yield* process(), yield* process(), yield* process()]
        expect(yield* a.hold("one", 1)).toBe(0)
        expect(yield* b.hold("one", 1), "held by a").toBeUndefined()
        expect(yield* a.hold("one", 1), "renewed by its holder").toBe(0)
        expect(yield* c.hold("one", 1), "still held by a").toBeUndefined()

        yield* expire("one", a.holder)
        expect(yield* b.hold("one", 1), "a's lease ran out").toBe(0)
        expect(yield* a.hold("one", 1), "a, back, finds it taken").toBeUndefined()
        expect(yield* c.hold("one", 1)).toBeUndefined()
      })
  )

  it.effect(
    "binds 2: two holders at once, a third waits; a slot given up is taken at once; routes are independent",
    () =>
      Effect.gen(function* () {
        const [a, b, c] = [yield* process(), yield* process(), yield* process()]
        const held = [yield* a.hold("two", 2), yield* b.hold("two", 2), yield* c.hold("two", 2)]
        expect(held).toEqual([0, 1, undefined])
        expect(yield* c.hold("other", 1), "another route's slot").toBe(0)

        yield* a.release("two")
        expect(yield* c.hold("two", 2), "a gave its slot up").toBe(0)
        expect(yield* a.hold("two", 2)).toBeUndefined()
      })
  )

  it.effect("a gate takes a slot when it runs, says which it holds, and gives it up when it closes", () =>
    Effect.gen(function* () {
      const [a, b] = [yield* process(), yield* process()]
      const gateA = makeBindGate(a, "gate", 1)
      const gateB = makeBindGate(b, "gate", 1)
      expect({ a: gateA.slot(), b: gateB.slot() }, "before they run").toEqual({ a: undefined, b: undefined })
      yield* Effect.gen(function* () {
        yield* Effect.forkChild(gateA.run)
        yield* gateA.awaitHeld
      })
      expect({ a: gateA.slot(), b: gateB.slot(), slots: gateA.slots }).toEqual({ a: 0, b: undefined, slots: 1 })
      expect(yield* b.hold("gate", 1), "held by a's gate").toBeUndefined()
      yield* gateA.close
      expect(gateA.slot(), "closed").toBeUndefined()
      yield* Effect.gen(function* () {
        yield* Effect.forkChild(gateB.run)
        yield* gateB.awaitHeld
      })
      expect(gateB.slot(), "given up by a: b's gate takes it").toBe(0)
      yield* gateB.close
    })
  )
})
