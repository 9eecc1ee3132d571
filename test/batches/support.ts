/**
 * Shared helpers of the batch tests (docs/integrators.md#batches): paths, request bodies, recipients,
 * reading every page of a batch, and the shape checks of the Batch and Message resources, over
 * the app of the suite (App).
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { App, type Reply } from "../support/TestApp.ts"
import { timelineEntriesSql } from "../support/Timelines.ts"

export const batchesPath = "/api/sms/v2/message-batches/"
export const batchPath = (id: string) => `${batchesPath}${id}/`
export const messagesPath = (id: string, cursor?: string) =>
  `${batchPath(id)}messages/${cursor === undefined ? "" : `?cursor=${encodeURIComponent(cursor)}`}`

/** The eight statuses of docs/integrators.md#message-lifecycle, in the order of docs/integrators.md#batches's StatusCounts. */
export const statuses = [
  "scheduled",
  "processing",
  "accepted",
  "delivered",
  "undeliverable",
  "blocked",
  "failed",
  "unknown"
] as const
export type Status = (typeof statuses)[number]
export type Counts = Record<Status, number>

export const zeroCounts = (): Counts => ({
  scheduled: 0,
  processing: 0,
  accepted: 0,
  delivered: 0,
  undeliverable: 0,
  blocked: 0,
  failed: 0,
  unknown: 0
})

export const countsOf = (list: ReadonlyArray<string>): Counts => {
  const counts = zeroCounts()
  for (const s of list) counts[s as Status] += 1
  return counts
}

/** A one-segment GSM-7 text. */
export const oneSegmentText = "Batch test: your appointment is confirmed."
/** A two-segment GSM-7 text (200 septets: more than 160, at most 306). */
export const twoSegmentText = `Batch test, two segments. ${"abcdefghij".repeat(17)}`.slice(0, 200)

/** `n` distinct ordinary numbers (`+26133...`: never one of the simulator's `+2613400000xx` test numbers). */
export const ordinaryNumbers = (n: number, base = 0): Array<string> =>
  Array.from({ length: n }, (_, i) => `+26133${String(base + i).padStart(7, "0")}`)

/** The simulator test numbers of docs/decisions.md#the-provider-simulator and the final status each reaches once dispatched. */
export const testNumberOutcomes: ReadonlyArray<readonly [string, Status]> = [
  ["+261340000001", "delivered"],
  ["+261340000002", "undeliverable"],
  ["+261340000003", "failed"],
  ["+261340000004", "delivered"],
  ["+261340000005", "failed"],
  ["+261340000006", "accepted"],
  ["+261340000007", "delivered"],
  ["+261340000008", "failed"],
  ["+261340000009", "unknown"]
]
const finalOf = new Map(testNumberOutcomes)

/** The status docs/decisions.md#the-provider-simulator promises for a batch member once everything about it is settled (any other number is delivered). */
export const expectedFinal = (to: string): Status => finalOf.get(to) ?? "delivered"

/** `at` written with the offset `+hh:mm` / `-hh:mm` (same instant), without milliseconds. */
export const withOffset = (at: Date, offset: string): string => {
  const sign = offset.startsWith("-") ? -1 : 1
  const [h, m] = offset.slice(1).split(":").map(Number)
  const shifted = new Date(at.getTime() + sign * (h! * 60 + m!) * 60_000)
  return `${shifted.toISOString().slice(0, 19)}${offset}`
}

/** Asserts a 202 batch admission and returns its body. */
export const expectAdmitted = (res: Reply) => {
  expect(res.status, res.text).toBe(202)
  expectBatchShape(res.body)
  expect(res.headers.get("location")).toBe(batchPath(res.body.id))
  return res.body as BatchBody
}

export interface BatchBody {
  readonly id: string
  readonly recipient_count: number
  readonly credits_reserved: number
  readonly send_at: string
  readonly created_at: string
  readonly counts: Counts
}

export interface MessageBody {
  readonly id: string
  readonly to: string
  readonly sender_name: string
  readonly status: Status
  readonly segments: number
  readonly send_at: string | null
  readonly delivery_time: string | null
}

const utcTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

/** Spec 2.5: exactly the six fields, StatusCounts with all eight statuses, counts summing to recipient_count. */
export const expectBatchShape = (body: BatchBody) => {
  expect(Object.keys(body).sort()).toEqual([
    "counts",
    "created_at",
    "credits_reserved",
    "id",
    "recipient_count",
    "send_at"
  ])
  expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  expect(body.send_at).toMatch(utcTimestamp)
  expect(body.created_at).toMatch(utcTimestamp)
  expect(Object.keys(body.counts).sort()).toEqual([...statuses].sort())
  for (const s of statuses) {
    expect(Number.isInteger(body.counts[s])).toBe(true)
    expect(body.counts[s]).toBeGreaterThanOrEqual(0)
  }
  expect(statuses.reduce((sum, s) => sum + body.counts[s], 0)).toBe(body.recipient_count)
}

/** Spec 2.2: every Message field present. */
export const expectMessageShape = (m: MessageBody) => {
  expect(Object.keys(m).sort()).toEqual(["delivery_time", "id", "segments", "send_at", "sender_name", "status", "to"])
  expect(statuses).toContain(m.status)
}

/** POSTs a batch under `key` (a fresh one by default; null sends no Idempotency-Key header). */
export const postBatch = (token: string, body: unknown, key: string | null = randomUUID()) =>
  Effect.flatMap(App, (app) =>
    app.call("POST", batchesPath, { token, body, ...(key === null ? {} : { headers: { "idempotency-key": key } }) })
  )

export const getBatch = (token: string, id: string) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).call("GET", batchPath(id), { token })
    expect(res.status, res.text).toBe(200)
    expectBatchShape(res.body)
    return res.body as BatchBody
  })

export const getPage = (token: string, id: string, cursor?: string) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).call("GET", messagesPath(id, cursor), { token })
    expect(res.status, res.text).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(["next_cursor", "results"])
    const results = res.body.results as Array<MessageBody>
    expect(results.length).toBeLessThanOrEqual(100)
    for (const m of results) expectMessageShape(m)
    return { results, nextCursor: res.body.next_cursor as string | null }
  })

/** Every message of the batch, page after page, with the size of each page. */
export const readAll = (token: string, id: string) =>
  Effect.gen(function* () {
    const messages: Array<MessageBody> = []
    const sizes: Array<number> = []
    let cursor: string | undefined
    for (let guard = 0; guard < 20; guard++) {
      const page: { results: Array<MessageBody>; nextCursor: string | null } = yield* getPage(token, id, cursor)
      messages.push(...page.results)
      sizes.push(page.results.length)
      if (page.nextCursor === null) return { messages, sizes }
      expect(typeof page.nextCursor).toBe("string")
      cursor = page.nextCursor
    }
    throw new Error("more than 20 pages")
  })

export const getBalance = (token: string) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).call("GET", "/api/sms/v2/balance/", { token })
    expect(res.status, res.text).toBe(200)
    return res.body as { total: number; reserved: number; available: number; valid_until: string | null }
  })

/** Every member of a batch straight from the store: position order, status, timeline length. */
export const membersOf = (orgId: string, batchId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string; position: number; toNumber: string; status: string; events: number }>`SELECT
        m.id::text AS id, m.batch_position AS position, m.to_number, m.status,
        (SELECT count(*) FROM (${sql.literal(timelineEntriesSql)}) AS e
          WHERE e.organisation_id = m.organisation_id AND e.message_id = m.id)::integer AS events
      FROM messages m WHERE m.organisation_id = ${orgId} AND m.batch_id = ${batchId}
      ORDER BY m.batch_position`
  })
