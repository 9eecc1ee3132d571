/**
 * Timelines in the message row (issue 23, src/messages/CompactTimeline.ts) under the service's
 * test clock: every status change appends its entry to the row, so a message has no
 * `message_events` rows. The rows of a database upgraded from before (made here by `legacy`,
 * which moves a message's entries back into rows) are collapsed into the row by compaction a day
 * after the message became final (MessageStore.collapseTimelines), its answers (the integrator's
 * GET, the operator's with the timeline) the same bytes as before; a message not final, or final
 * for less than a day, keeps its rows; an erased message keeps its timeline, collapsed before or
 * after its erasure; rows that do not chain are left as they are; messages another transaction
 * holds are skipped, not waited for (PostgreSQL). A finished message keeps no credit hold: its
 * ledger entries say what it held. Each test advances the shared clock: it only judges its own messages.
 */
import { randomUUID } from "node:crypto"
import { Clock, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect } from "@effect/vitest"
import { compactAfterMs, compactionSetMax } from "../../src/messages/Compaction.ts"
import { entryBytes, unpackedEntries } from "../../src/messages/CompactTimeline.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const dayMs = 86_400_000
const messagesPath = "/api/sms/v2/messages/"

/** A message of a new organisation: sent now, or scheduled `inMs` ahead. */
const send = (inMs?: number) =>
  Effect.gen(function* () {
    const app = yield* App
    const { orgId, apiKey } = yield* app.newOrg({ credits: 10, sender: "KEEP" })
    const body = {
      to: "+261340000001",
      text: `a timeline to collapse ${randomUUID()}`,
      ...(inMs === undefined ? {} : { send_at: new Date((yield* app.now) + inMs).toISOString() })
    }
    const created = yield* app.call("POST", messagesPath, {
      token: apiKey,
      body,
      headers: { "idempotency-key": randomUUID() }
    })
    expect(created.status, created.text).toBe(inMs === undefined ? 201 : 202)
    const id: string = created.body.id
    /** The integrator's answer and the operator's (with the timeline), as sent. */
    const answers = () =>
      Effect.gen(function* () {
        const [own, operator] = [
          yield* app.call("GET", `${messagesPath}${id}/`, { token: apiKey }),
          yield* app.admin("GET", `/organizations/${orgId}/messages/${id}`)
        ]
        expect([own.status, operator.status], operator.text).toEqual([200, 200])
        return { own: own.text, operator: operator.text }
      })
    /** Its timeline rows and the bytes of its collapsed timeline (null: not collapsed). */
    const stored = () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ rows: number; collapsed: number | null }>`SELECT
            (SELECT count(*) FROM message_events WHERE organisation_id = ${orgId} AND message_id = ${id})::integer AS rows,
            (SELECT length(timeline) FROM messages WHERE organisation_id = ${orgId} AND id = ${id}) AS collapsed`
        return row!
      })
    const status = () => answers().pipe(Effect.map((a) => JSON.parse(a.own).status as string))
    /** Makes it a message of a database upgraded from before: its entries moved back into timeline rows. */
    const legacy = () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
          SELECT m.organisation_id, m.id, lag(c.to_status) OVER (ORDER BY c.n), c.to_status, c.source, c.at
          FROM messages AS m CROSS JOIN LATERAL (${sql.literal(unpackedEntries("m.timeline"))}) AS c
          WHERE m.organisation_id = ${orgId} AND m.id = ${id} ORDER BY c.n`
        yield* sql`UPDATE messages SET timeline = NULL WHERE organisation_id = ${orgId} AND id = ${id}`
      })
    return { orgId, apiKey, id, answers, stored, status, legacy }
  })

type Sent = Effect.Success<ReturnType<typeof send>>

/** Advances until the message is delivered (the simulator's receipt). */
const delivered = (m: Sent) =>
  Effect.gen(function* () {
    const app = yield* App
    yield* app.advance(app.config.simulatorReceiptDelayMs + 1_000)
    expect(yield* m.status()).toBe("delivered")
  })

withApp({ label: "timeline_compaction", config: { clock: "test" } })((it) => {
  describe(`timelines in the message row (${backend})`, () => {
    it.effect(
      "every status change appends its entry to the message's row, read back with the operator's answer; no timeline rows",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const m = yield* send(60_000)
          expect(yield* m.stored()).toEqual({ rows: 0, collapsed: entryBytes })
          yield* app.advance(60_000)
          yield* delivered(m)
          expect(yield* m.stored()).toEqual({ rows: 0, collapsed: 4 * entryBytes })
          const timeline: ReadonlyArray<{ from_status: string | null; to_status: string; source: string }> = JSON.parse(
            (yield* m.answers()).operator
          ).timeline
          expect(timeline.map((t) => [t.from_status, t.to_status, t.source])).toEqual([
            [null, "scheduled", "admission"],
            ["scheduled", "processing", "dispatch"],
            ["processing", "accepted", "provider"],
            ["accepted", "delivered", "receipt"]
          ])
          // the same entries as rows (an upgraded database's) read the same
          const answers = yield* m.answers()
          yield* m.legacy()
          expect(yield* m.stored()).toEqual({ rows: 4, collapsed: null })
          expect(yield* m.answers()).toEqual(answers)
        })
    )

    it.effect(
      "a finished message keeps no credit hold: its entries say what it held; a waiting one keeps its pending hold",
      () =>
        Effect.gen(function* () {
          /** The organisation's holds by state and its entries' sums by kind. */
          const ledgerOf = (m: Sent) =>
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const holds = yield* sql<{
                state: string
                n: number
              }>`SELECT state, count(*)::integer AS n FROM credit_holds
              WHERE organisation_id = ${m.orgId} GROUP BY state ORDER BY state`
              const entries = yield* sql<{
                kind: string
                amount: number
              }>`SELECT kind, sum(amount)::integer AS amount FROM credit_entries
              WHERE organisation_id = ${m.orgId} GROUP BY kind ORDER BY kind`
              return { holds, entries }
            })
          const done = yield* send()
          yield* delivered(done)
          const waiting = yield* send(10 * dayMs)
          expect(yield* ledgerOf(done)).toEqual({
            holds: [],
            entries: [
              { kind: "consume", amount: 1 },
              { kind: "grant", amount: 10 },
              { kind: "reserve", amount: 1 }
            ]
          })
          expect(yield* ledgerOf(waiting)).toEqual({
            holds: [{ state: "pending", n: 1 }],
            entries: [
              { kind: "grant", amount: 10 },
              { kind: "reserve", amount: 1 }
            ]
          })
        })
    )
  })

  describe(`timeline rows of an upgraded database, collapsed by compaction (${backend})`, () => {
    it.effect(
      "a day after a message became final its timeline rows are collapsed into its row, its answers byte for byte the same; younger and unfinished ones keep their rows",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const old = yield* send(60_000)
          yield* app.advance(60_000)
          yield* delivered(old)
          yield* old.legacy()
          const oldAnswers = yield* old.answers()
          expect(JSON.parse(oldAnswers.operator).timeline.map((t: { to_status: string }) => t.to_status)).toEqual([
            "scheduled",
            "processing",
            "accepted",
            "delivered"
          ])
          expect(yield* old.stored()).toEqual({ rows: 4, collapsed: null })

          yield* app.advance(dayMs / 2)
          const young = yield* send()
          yield* delivered(young)
          yield* young.legacy()
          const youngAnswers = yield* young.answers()
          const waiting = yield* send(10 * dayMs)
          yield* waiting.legacy()
          const waitingAnswers = yield* waiting.answers()

          // final for a minute less than a day: untouched
          yield* app.advance(dayMs / 2 - 2 * 60_000)
          expect(yield* old.stored()).toEqual({ rows: 4, collapsed: null })

          yield* app.advance(2 * 60_000)
          expect(yield* old.stored()).toEqual({ rows: 0, collapsed: 4 * entryBytes })
          expect(yield* old.answers()).toEqual(oldAnswers)
          expect(yield* young.stored()).toEqual({ rows: 3, collapsed: null })
          expect(yield* young.answers()).toEqual(youngAnswers)
          expect(yield* waiting.stored()).toEqual({ rows: 1, collapsed: null })
          expect(yield* waiting.answers()).toEqual(waitingAnswers)

          // the younger one's turn comes a day after it was delivered; the scheduled one is never final
          yield* app.advance(dayMs / 2 + 60_000)
          expect(yield* young.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
          expect(yield* young.answers()).toEqual(youngAnswers)
          expect(yield* waiting.stored()).toEqual({ rows: 1, collapsed: null })
          expect(yield* old.answers()).toEqual(oldAnswers)
        })
    )

    it.effect("an erased message shows its timeline, collapsed after its erasure or before it", () =>
      Effect.gen(function* () {
        const app = yield* App
        const erasedFirst = yield* send()
        const collapsedFirst = yield* send()
        yield* delivered(erasedFirst)
        yield* erasedFirst.legacy()
        yield* collapsedFirst.legacy()
        const erase = (m: Sent) =>
          Effect.gen(function* () {
            const erased = yield* app.admin("POST", `/organizations/${m.orgId}/messages/${m.id}/erasure`)
            expect(erased.status, erased.text).toBe(200)
          })
        yield* erase(erasedFirst)
        const erasedAnswers = yield* erasedFirst.answers()
        expect(JSON.parse(erasedAnswers.operator)).toMatchObject({ to: "", sender_name: "", status: "delivered" })
        const timelineOf = (m: Sent) => m.answers().pipe(Effect.map((a) => JSON.parse(a.operator).timeline))
        const before = yield* timelineOf(collapsedFirst)
        expect(before).toHaveLength(3)

        yield* app.advance(dayMs + 60_000)
        expect(yield* erasedFirst.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
        expect(yield* erasedFirst.answers()).toEqual(erasedAnswers)
        expect(yield* collapsedFirst.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
        yield* erase(collapsedFirst)
        // the same entries; the route that took it goes with its provider id (docs/operators.md#fallback-routes)
        expect(before.find((t: { route?: string }) => t.route !== undefined)?.route).toBe("sim")
        const erasedTimeline = before.map(({ route: _, ...entry }: { route?: string }) => entry)
        expect(JSON.parse((yield* collapsedFirst.answers()).operator)).toMatchObject({
          to: "",
          status: "delivered",
          timeline: erasedTimeline
        })
        yield* app.advance(dayMs + 60_000)
        expect(yield* timelineOf(collapsedFirst)).toEqual(erasedTimeline)
        expect(yield* collapsedFirst.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
      })
    )

    it.effect("rows that do not chain are left as they are, read as before, and not looked at again", () =>
      Effect.gen(function* () {
        const app = yield* App
        const m = yield* send()
        yield* delivered(m)
        yield* m.legacy()
        // an entry whose from_status is not the previous entry's to_status: collapsing it would lose that
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
            SELECT organisation_id, id, 'processing', 'delivered', 'receipt', updated_at FROM messages
            WHERE organisation_id = ${m.orgId} AND id = ${m.id}`
        })
        const answers = yield* m.answers()
        expect(JSON.parse(answers.operator).timeline).toHaveLength(4)
        yield* app.advance(dayMs + 60_000)
        expect(yield* m.stored()).toEqual({ rows: 4, collapsed: 0 })
        expect(yield* m.answers()).toEqual(answers)
      })
    )

    // the embedded database serves one connection at a time: a transaction holding a row holds it all
    it.effect.skipIf(backend !== "PostgreSQL")(
      "skips the messages another transaction holds, without waiting for them",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const [held, free] = [yield* send(), yield* send()]
          yield* delivered(held)
          yield* held.legacy()
          yield* free.legacy()
          // a day later, without running the background work: the collapse below is the only one
          yield* app.moveClock(dayMs + 60_000)
          let locked!: () => void
          let release!: () => void
          const [isLocked, released] = [new Promise<void>((r) => (locked = r)), new Promise<void>((r) => (release = r))]
          const holder = yield* Effect.forkChild(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* Effect.gen(function* () {
                yield* sql`SELECT 1 FROM messages WHERE organisation_id = ${held.orgId} AND id = ${held.id} FOR UPDATE`
                locked()
                yield* Effect.promise(() => released)
              }).pipe(sql.withTransaction)
            })
          )
          yield* Effect.promise(() => isLocked)
          const collapse = Effect.gen(function* () {
            return (yield* (yield* MessageStore).collapseTimelines(
              new Date((yield* Clock.currentTimeMillis) - compactAfterMs),
              compactionSetMax
            )).length
          })
          // it answers while the row is still held (a wait would time the test out)
          expect(yield* collapse).toBeGreaterThanOrEqual(1)
          expect(yield* free.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
          expect(yield* held.stored()).toEqual({ rows: 3, collapsed: null })
          release()
          yield* Fiber.join(holder)
          yield* app.advance(1_000)
          expect(yield* held.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
        })
    )
  })
})
