/**
 * Verification of `unknown` messages over time, on the service's test clock: checks doubling from
 * SMS_VERIFY_INTERVAL_MS, hourly once a message has been unknown for an hour, daily once for a
 * day, none after 30 days (the message stays unknown, its credits reserved); and the operator's
 * POST .../verification, which asks again now and starts the schedule again.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { balanceOf, create } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const second = 1_000
const hour = 3_600 * second
const day = 24 * hour
const verifyIntervalMs = 5 * second

const verifyPath = (orgId: string, id: string) => `/organizations/${orgId}/messages/${id}/verification`
const queriesOf = (id: string) => Effect.map(App, (app) => app.calls.queries.get(id) ?? 0)

/** When the message's next check is due (ms), undefined when none is scheduled. */
const nextCheck = (id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ verifyAt: Date | null }>`SELECT verify_at FROM messages WHERE id = ${id}`
    return row?.verifyAt?.getTime()
  })

/** Follows the message's checks one by one until none is left (bounded); their instants relative to `since`. */
const followChecks = (id: string, since: number) =>
  Effect.gen(function* () {
    const app = yield* App
    const offsets: Array<number> = []
    for (let next = yield* nextCheck(id); next !== undefined; next = yield* nextCheck(id)) {
      if (offsets.length > 200) throw new Error(`still checking after 200 checks: ${offsets.join(", ")}`)
      yield* app.advanceTo(next)
      offsets.push(next - since)
    }
    return offsets
  })

withApp({ label: "verification", config: { clock: "test", verifyIntervalMs } })(
  `verification of unknown messages (${backend})`,
  (it) => {
    it.effect(
      "asks with gaps doubling from the interval, hourly after an hour, daily after a day, last at 30 days, then never",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 2 })
          const since = yield* app.now
          const { id, reply } = yield* create(apiKey, { to: testNumbers.unknownForGood, text: "for good" })
          expect(reply.status).toBe(502)

          const offsets = yield* followChecks(id, since)
          // 5 s, then gaps of 10 s, 20 s ... 2560 s: unknown for more than an hour, then hourly
          expect(offsets.slice(0, 11)).toEqual(
            [5, 15, 35, 75, 155, 315, 635, 1275, 2555, 5115, 8715].map((s) => s * second)
          )
          const gaps = offsets.slice(1).map((at, i) => ({ age: offsets[i]!, gap: at - offsets[i]! }))
          // never closer together than the previous two, until the last (cut short at 30 days)
          expect(gaps.slice(1, -1).every(({ gap }, i) => gap >= gaps[i]!.gap)).toBe(true)
          expect(gaps.filter(({ age }) => age >= hour && age < day).map(({ gap }) => gap)).toEqual(Array(23).fill(hour))
          const daily = gaps.filter(({ age }) => age >= day)
          expect(daily.slice(0, -1).map(({ gap }) => gap)).toEqual(Array(28).fill(day))
          // the last check is 30 days after the message became unknown, not a day after the one before
          expect(offsets.at(-1)).toBe(30 * day)
          expect(daily.at(-1)!.gap).toBeLessThan(day)
          expect(offsets).toHaveLength(62)
          expect(yield* queriesOf(id)).toBe(offsets.length)

          yield* app.advance(10 * day)
          expect(yield* queriesOf(id)).toBe(offsets.length)
          const left = yield* app.admin("GET", `/organizations/${orgId}/messages/${id}`)
          expect(left.body.status).toBe("unknown")
          expect(yield* balanceOf(orgId)).toEqual({ total: 2, reserved: 1, available: 1 })

          // the operator asks again: one check now, then the schedule from the start
          const askedAt = yield* app.now
          const asked = yield* app.admin("POST", verifyPath(orgId, id))
          expect(asked.status, asked.text).toBe(200)
          expect(asked.body).toMatchObject({ id, status: "unknown", to: testNumbers.unknownForGood })
          expect(asked.body.timeline.map((t: { to_status: string }) => t.to_status)).toEqual(["processing", "unknown"])
          expect(yield* queriesOf(id)).toBe(offsets.length + 1)
          expect(yield* nextCheck(id)).toBe(askedAt + 2 * verifyIntervalMs)
          yield* app.advance(2 * verifyIntervalMs)
          expect(yield* queriesOf(id)).toBe(offsets.length + 2)
          expect(yield* balanceOf(orgId)).toEqual({ total: 2, reserved: 1, available: 1 })
        })
    )

    it.effect(
      "a message the provider never received: asked again before its first check, it is failed at once, credits released",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { orgId, apiKey } = yield* app.newOrg({ credits: 3 })
          const { id, reply } = yield* create(apiKey, { to: testNumbers.unknownNeverReceived, text: "eight" })
          expect(reply.status).toBe(502)
          expect(yield* queriesOf(id)).toBe(0)

          const asked = yield* app.admin("POST", verifyPath(orgId, id))
          expect(asked.status, asked.text).toBe(200)
          expect(asked.body.status).toBe("failed")
          expect(
            asked.body.timeline.map((t: { source: string; to_status: string }) => `${t.to_status}@${t.source}`)
          ).toEqual(["processing@admission", "unknown@provider", "failed@verification"])
          expect(yield* balanceOf(orgId)).toEqual({ total: 3, reserved: 0, available: 3 })
          expect(yield* nextCheck(id)).toBeUndefined()
        })
    )

    it.effect("409 message_not_unknown for a message in any other status; 404 for one of another organisation", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 3 })
        const failed = yield* create(apiKey, { to: testNumbers.rejected, text: "three" })
        const refused = yield* app.admin("POST", verifyPath(orgId, failed.id))
        expect({ status: refused.status, body: refused.body }).toEqual({
          status: 409,
          body: {
            error: { code: "message_not_unknown", message: expect.stringMatching(/failed/) },
            message_id: failed.id
          }
        })
        expect(yield* queriesOf(failed.id)).toBe(0)

        const unknown = yield* create(apiKey, { to: testNumbers.unknownForGood, text: "nine" })
        const other = yield* app.newOrg({ credits: 1 })
        const elsewhere = yield* app.admin("POST", verifyPath(other.orgId, unknown.id))
        expect({ status: elsewhere.status, code: elsewhere.body.error.code }).toEqual({
          status: 404,
          code: "not_found"
        })
        expect(yield* queriesOf(unknown.id)).toBe(0)
      })
    )
  }
)
