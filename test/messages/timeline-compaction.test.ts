/**
 * Compaction collapses a finished message's timeline into its row (issue 23, MessageStore.collapseTimelines)
 * under the service's test clock: a day after the message became final its `message_events` rows
 * are gone and its answers (the integrator's GET, the operator's with the timeline) are the same
 * bytes as before; a message not final, or final for less than a day, keeps its rows; an erased
 * message keeps its timeline, collapsed before or after its erasure; rows that do not chain are
 * left as they are; messages another transaction holds are skipped, not waited for (PostgreSQL).
 * With the timeline go the message's settled credit holds; its ledger entries and the balance stay.
 * Each test advances the shared clock: it only judges its own messages.
 */
import { randomUUID } from "node:crypto"
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { compactAfterMs, compactionSetMax } from "../../src/dispatch/Compaction.ts"
import { entryBytes } from "../../src/messages/CompactTimeline.ts"
import { LedgerStore } from "../../src/ledger/LedgerStore.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { backend, makeTestApp } from "../support/TestApp.ts"

const app = makeTestApp({ label: "timeline_compaction", config: { clock: "test" } })
afterAll(() => app.dispose())

const dayMs = 86_400_000
const messagesPath = "/api/sms/v2/messages/"

/** A message of a new organisation: sent now, or scheduled `inMs` ahead. */
const send = async (inMs?: number) => {
  const { orgId, apiKey } = await app.newOrg({ credits: 10, sender: "KEEP" })
  const body = {
    to: "+261340000001",
    text: `a timeline to collapse ${randomUUID()}`,
    ...(inMs === undefined ? {} : { send_at: new Date((await app.now()) + inMs).toISOString() })
  }
  const created = await app.call("POST", messagesPath, { token: apiKey, body, headers: { "idempotency-key": randomUUID() } })
  expect(created.status, created.text).toBe(inMs === undefined ? 201 : 202)
  const id: string = created.body.id
  /** The integrator's answer and the operator's (with the timeline), as sent. */
  const answers = async () => {
    const [own, operator] = [await app.call("GET", `${messagesPath}${id}/`, { token: apiKey }), await app.admin("GET", `/organizations/${orgId}/messages/${id}`)]
    expect([own.status, operator.status], operator.text).toEqual([200, 200])
    return { own: own.text, operator: operator.text }
  }
  /** Its timeline rows and the bytes of its collapsed timeline (null: not collapsed). */
  const stored = () =>
    app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ rows: number; collapsed: number | null }>`SELECT
          (SELECT count(*) FROM message_events WHERE organisation_id = ${orgId} AND message_id = ${id})::integer AS rows,
          (SELECT length(timeline) FROM messages WHERE organisation_id = ${orgId} AND id = ${id}) AS collapsed`
      return row!
    }))
  const status = async () => JSON.parse((await answers()).own).status as string
  return { orgId, apiKey, id, answers, stored, status }
}

type Sent = Awaited<ReturnType<typeof send>>

/** Advances until the message is delivered (the simulator's receipt). */
const delivered = async (m: Sent) => {
  await app.advance(app.config.simulatorReceiptDelayMs + 1_000)
  expect(await m.status()).toBe("delivered")
}

describe(`timeline compaction (${backend})`, () => {
  it("a day after a message became final its timeline rows are collapsed into its row, its answers byte for byte the same; younger and unfinished ones keep their rows", async () => {
    const old = await send(60_000)
    await app.advance(60_000)
    await delivered(old)
    const oldAnswers = await old.answers()
    expect(JSON.parse(oldAnswers.operator).timeline.map((t: { to_status: string }) => t.to_status))
      .toEqual(["scheduled", "processing", "accepted", "delivered"])
    expect(await old.stored()).toEqual({ rows: 4, collapsed: null })

    await app.advance(dayMs / 2)
    const young = await send()
    await delivered(young)
    const youngAnswers = await young.answers()
    const waiting = await send(10 * dayMs)
    const waitingAnswers = await waiting.answers()

    // final for a minute less than a day: untouched
    await app.advance(dayMs / 2 - 2 * 60_000)
    expect(await old.stored()).toEqual({ rows: 4, collapsed: null })

    await app.advance(2 * 60_000)
    expect(await old.stored()).toEqual({ rows: 0, collapsed: 4 * entryBytes })
    expect(await old.answers()).toEqual(oldAnswers)
    expect(await young.stored()).toEqual({ rows: 3, collapsed: null })
    expect(await young.answers()).toEqual(youngAnswers)
    expect(await waiting.stored()).toEqual({ rows: 1, collapsed: null })
    expect(await waiting.answers()).toEqual(waitingAnswers)

    // the younger one's turn comes a day after it was delivered; the scheduled one is never final
    await app.advance(dayMs / 2 + 60_000)
    expect(await young.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
    expect(await young.answers()).toEqual(youngAnswers)
    expect(await waiting.stored()).toEqual({ rows: 1, collapsed: null })
    expect(await old.answers()).toEqual(oldAnswers)
  })

  it("with a collapsed timeline go the message's settled credit holds; its ledger entries and the balance stay", async () => {
    /** The organisation's holds by state, its entries' sums by kind, and its balance. */
    const ledgerOf = async (m: Sent) => ({
      ...(await app.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const holds = yield* sql<{ state: string; n: number }>`SELECT state, count(*)::integer AS n FROM credit_holds
          WHERE organisation_id = ${m.orgId} GROUP BY state ORDER BY state`
        const entries = yield* sql<{ kind: string; amount: number }>`SELECT kind, sum(amount)::integer AS amount FROM credit_entries
          WHERE organisation_id = ${m.orgId} GROUP BY kind ORDER BY kind`
        return { holds, entries }
      }))),
      balance: (await app.call("GET", "/api/sms/v2/balance/", { token: m.apiKey })).text
    })
    const done = await send()
    await delivered(done)
    const waiting = await send(10 * dayMs)
    const [doneBefore, waitingBefore] = [await ledgerOf(done), await ledgerOf(waiting)]
    expect(doneBefore.holds).toEqual([{ state: "posted", n: 1 }])
    expect(doneBefore.entries).toEqual([{ kind: "consume", amount: 1 }, { kind: "grant", amount: 10 }, { kind: "reserve", amount: 1 }])
    expect(waitingBefore.holds).toEqual([{ state: "pending", n: 1 }])
    // a pending hold is never removed, even when asked for
    expect(await app.run(Effect.flatMap(LedgerStore, (l) => l.dropSettledHolds([{ organisationId: waiting.orgId, id: waiting.id }])))).toBe(0)

    await app.advance(dayMs + 60_000)
    expect(await done.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
    expect(await ledgerOf(done)).toEqual({ ...doneBefore, holds: [] })
    expect(await ledgerOf(waiting)).toEqual(waitingBefore)
  })

  it("an erased message shows its timeline, collapsed after its erasure or before it", async () => {
    const erasedFirst = await send()
    const collapsedFirst = await send()
    await delivered(erasedFirst)
    const erase = async (m: Sent) => {
      const erased = await app.admin("POST", `/organizations/${m.orgId}/messages/${m.id}/erasure`)
      expect(erased.status, erased.text).toBe(200)
    }
    await erase(erasedFirst)
    const erasedAnswers = await erasedFirst.answers()
    expect(JSON.parse(erasedAnswers.operator)).toMatchObject({ to: "", sender_name: "", status: "delivered" })
    const timelineOf = async (m: Sent) => JSON.parse((await m.answers()).operator).timeline
    const before = await timelineOf(collapsedFirst)
    expect(before).toHaveLength(3)

    await app.advance(dayMs + 60_000)
    expect(await erasedFirst.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
    expect(await erasedFirst.answers()).toEqual(erasedAnswers)
    expect(await collapsedFirst.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
    await erase(collapsedFirst)
    expect(JSON.parse((await collapsedFirst.answers()).operator)).toMatchObject({ to: "", status: "delivered", timeline: before })
    await app.advance(dayMs + 60_000)
    expect(await timelineOf(collapsedFirst)).toEqual(before)
    expect(await collapsedFirst.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
  })

  it("rows that do not chain are left as they are, read as before, and not looked at again", async () => {
    const m = await send()
    await delivered(m)
    // an entry whose from_status is not the previous entry's to_status: collapsing it would lose that
    await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
        SELECT organisation_id, id, 'processing', 'delivered', 'receipt', updated_at FROM messages
        WHERE organisation_id = ${m.orgId} AND id = ${m.id}`
    }))
    const answers = await m.answers()
    expect(JSON.parse(answers.operator).timeline).toHaveLength(4)
    await app.advance(dayMs + 60_000)
    expect(await m.stored()).toEqual({ rows: 4, collapsed: 0 })
    expect(await m.answers()).toEqual(answers)
  })

  // the embedded database serves one connection at a time: a transaction holding a row holds it all
  it.skipIf(backend !== "PostgreSQL")("skips the messages another transaction holds, without waiting for them", async () => {
    const [held, free] = [await send(), await send()]
    await delivered(held)
    // a day later, without running the background work: the collapse below is the only one
    await app.moveClock(dayMs + 60_000)
    let locked!: () => void
    let release!: () => void
    const [isLocked, released] = [new Promise<void>((r) => (locked = r)), new Promise<void>((r) => (release = r))]
    const holder = app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* Effect.gen(function*() {
        yield* sql`SELECT 1 FROM messages WHERE organisation_id = ${held.orgId} AND id = ${held.id} FOR UPDATE`
        locked()
        yield* Effect.promise(() => released)
      }).pipe(sql.withTransaction)
    }))
    await isLocked
    const collapse = app.run(Effect.gen(function*() {
      return (yield* (yield* MessageStore).collapseTimelines(new Date((yield* Clock.currentTimeMillis) - compactAfterMs), compactionSetMax)).length
    }))
    // it answers while the row is still held (a wait would time the test out)
    expect(await collapse).toBeGreaterThanOrEqual(1)
    expect(await free.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
    expect(await held.stored()).toEqual({ rows: 3, collapsed: null })
    release()
    await holder
    await app.advance(1_000)
    expect(await held.stored()).toEqual({ rows: 0, collapsed: 3 * entryBytes })
  })
})
