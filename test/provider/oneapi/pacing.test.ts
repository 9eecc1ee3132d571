/**
 * A OneAPI route's `mps` (docs/operators.md#oneapi-routes): its sends never exceed it in any
 * second (SlidingRate.ts, as SMPP routes), and dispatched messages' turns come evenly spaced at
 * it (Pacing.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { fakeOneApiPerFile } from "./FakeOneApi.ts"
import { makeRoute, send, submission } from "./support.ts"

const fake = fakeOneApiPerFile()

/**
 * Most requests the fake saw in any window of `ms` (800: the requests of one second may reach the
 * fake later than the route let them go, up to 200 ms on a loaded machine, which failed 950 once).
 */
const busiestSecond = (times: ReadonlyArray<number>, ms = 800): number =>
  Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + ms).length))

describe("a OneAPI route's mps", () => {
  it.live("caps its sends in any second, concurrent immediate sends included", () =>
    Effect.gen(function* () {
      // a deadline of 3 s: the last three wait a second for their turn, on a busy machine too
      const route = yield* makeRoute(fake().settings({ mps: 4 }), 3000)
      expect(route.ratePerSecond).toBe(4)
      const results = yield* Effect.forEach(
        Array.from({ length: 7 }, () => submission()),
        (s) => send(route, s, 3000),
        { concurrency: "unbounded" }
      )
      // 4 at once, then the three others a second later: all before the deadline, none sent twice
      expect(results.map((r) => r._tag)).toEqual(Array.from({ length: 7 }, () => "Accepted"))
      expect(fake().sends).toHaveLength(7)
      expect(busiestSecond(fake().sends.map((r) => r.at))).toBe(4)
    })
  )

  it.live("spaces dispatched messages' turns evenly at it", () =>
    Effect.gen(function* () {
      const route = yield* makeRoute(fake().settings({ mps: 10 }))
      const started = Date.now()
      for (let i = 0; i < 6; i++) yield* route.pace
      // six turns 100 ms apart, the first at once, each allowed 100 ms early
      expect(Date.now() - started).toBeGreaterThanOrEqual(380)
    })
  )

  it.live("without a cap, neither waits", () =>
    Effect.gen(function* () {
      const route = yield* makeRoute(fake().settings({ mps: 0 }))
      expect(route.ratePerSecond).toBe(0)
      const started = Date.now()
      for (let i = 0; i < 20; i++) yield* route.pace
      yield* Effect.forEach(
        Array.from({ length: 10 }, () => submission()),
        (s) => send(route, s),
        { concurrency: "unbounded" }
      )
      expect(busiestSecond(fake().sends.map((r) => r.at))).toBe(10)
      expect(Date.now() - started).toBeLessThan(1000)
    })
  )
})
