/**
 * The operator endpoints the console reads and drives: an organisation's messages (newest first,
 * by status, paged), its batches with their live counts, and the simulator's receipt on demand
 * (applied through the durable inbox; refused unless the message is accepted and the provider is
 * the simulator). On the service's test clock, so the simulated outcomes arrive when told.
 */
import { describe, expect } from "@effect/vitest"
import { createServer } from "node:net"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { decodeEnv } from "../support/ConfigEnv.ts"
import { create, statusOf } from "../support/Messages.ts"
import { App, backend, type Reply, type TestAppOptions, withApp } from "../support/TestApp.ts"
import { expectError, expectValidation } from "./helpers.ts"

const unknownUuid = "00000000-0000-4000-8000-000000000000"
const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const batchesPath = "/api/sms/v2/message-batches/"
const receiptPath = (orgId: string, id: string) => `/organizations/${orgId}/messages/${id}/receipt`

interface Listed {
  readonly id: string
  readonly status: string
  readonly created_at: string
  readonly batch_id: string | null
}

/** Every page of a list from the first to the last (bounded), with `limit` per page. */
const allPages = (path: string, limit: number) =>
  Effect.gen(function* () {
    const app = yield* App
    const pages: Array<{ results: Array<Listed>; next_cursor: string | null }> = []
    let cursor: string | null = null
    for (let i = 0; i < 100; i++) {
      const sep = path.includes("?") ? "&" : "?"
      const res: Reply = yield* app.admin(
        "GET",
        `${path}${sep}limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      )
      expect(res.status, res.text).toBe(200)
      pages.push(res.body)
      cursor = res.body.next_cursor
      if (cursor === null) return pages
    }
    throw new Error(`${path} did not end within 100 pages`)
  })

/** Newest first: created_at descending, ties by id descending. */
const isNewestFirst = (rows: ReadonlyArray<Listed>) =>
  rows.every((r, i) => {
    const prev = rows[i - 1]
    return prev === undefined || prev.created_at > r.created_at || (prev.created_at === r.created_at && prev.id > r.id)
  })

/** A 409 of the operator API about a stored message: the error body with its message_id. */
const expectConflict = (res: Reply, code: string, messageId: string) => {
  expect({ status: res.status, code: res.body?.error?.code }, res.text).toEqual({ status: 409, code })
  expect(res.body).toEqual({ error: { code, message: expect.stringMatching(/\S/) }, message_id: messageId })
}

withApp({ label: "activity", config: { clock: "test" } })((it) => {
  let org: { orgId: string; apiKey: string }
  const sent: Array<{ id: string; to: string }> = []
  const sendFour = Effect.gen(function* () {
    org = yield* (yield* App).newOrg({ credits: 100 })
    for (const to of [
      testNumbers.delivered,
      testNumbers.rejected,
      testNumbers.acceptedNoReceipt,
      testNumbers.delivered
    ]) {
      sent.push({ id: (yield* create(org.apiKey, { to, text: "Salama" })).id, to })
    }
  })

  it.layer(Layer.effectDiscard(sendFour))(`GET /admin/v1/organizations/{org_id}/messages (${backend})`, (it) => {
    it.effect("lists the organisation's messages newest first, with their status, batch and creation time", () =>
      Effect.gen(function* () {
        const app = yield* App
        const other = yield* app.newOrg({ credits: 10 })
        yield* create(other.apiKey, { to: testNumbers.delivered, text: "elsewhere" })

        const res = yield* app.admin("GET", `/organizations/${org.orgId}/messages`)
        expect(res.status, res.text).toBe(200)
        expect(Object.keys(res.body).sort()).toEqual(["next_cursor", "results"])
        expect(res.body.next_cursor).toBeNull()
        const results: Array<Listed & Record<string, unknown>> = res.body.results
        expect(results.map((m) => m.id).sort()).toEqual(sent.map((m) => m.id).sort())
        expect(isNewestFirst(results)).toBe(true)
        for (const m of results) {
          expect(Object.keys(m).sort()).toEqual([
            "batch_id",
            "created_at",
            "delivery_time",
            "id",
            "segments",
            "send_at",
            "sender_name",
            "status",
            "to"
          ])
          expect(m.created_at).toMatch(isoInstant)
          expect(m.batch_id).toBeNull()
          expect(m.to).toBe(sent.find((s) => s.id === m.id)!.to)
        }
        const statuses = Object.fromEntries(results.map((m) => [m.id, m.status]))
        expect(sent.map((s) => statuses[s.id])).toEqual(["accepted", "failed", "accepted", "accepted"])
      })
    )

    it.effect("filters by status", () =>
      Effect.gen(function* () {
        const app = yield* App
        const accepted = yield* app.admin("GET", `/organizations/${org.orgId}/messages?status=accepted`)
        expect(accepted.status, accepted.text).toBe(200)
        expect(accepted.body.results.map((m: Listed) => m.id).sort()).toEqual(
          [sent[0]!.id, sent[2]!.id, sent[3]!.id].sort()
        )
        const failed = yield* app.admin("GET", `/organizations/${org.orgId}/messages?status=failed`)
        expect(failed.body.results.map((m: Listed) => m.id)).toEqual([sent[1]!.id])
        const none = yield* app.admin("GET", `/organizations/${org.orgId}/messages?status=blocked`)
        expect(none.body).toEqual({ results: [], next_cursor: null })
      })
    )

    it.effect("pages with limit and next_cursor: every message once, in order, also within a status", () =>
      Effect.gen(function* () {
        const pages = yield* allPages(`/organizations/${org.orgId}/messages`, 3)
        expect(pages.map((p) => p.results.length)).toEqual([3, 1])
        const ids = pages.flatMap((p) => p.results.map((m) => m.id))
        expect(ids.sort()).toEqual(sent.map((m) => m.id).sort())
        expect(isNewestFirst(pages.flatMap((p) => p.results))).toBe(true)

        const accepted = yield* allPages(`/organizations/${org.orgId}/messages?status=accepted`, 2)
        expect(accepted.map((p) => p.results.length)).toEqual([2, 1])
        expect(accepted.flatMap((p) => p.results).every((m) => m.status === "accepted")).toBe(true)
      })
    )

    it.effect("refuses a bad limit, status or cursor, and answers 404 for an unknown organisation", () =>
      Effect.gen(function* () {
        const app = yield* App
        for (const limit of ["0", "101", "x"]) {
          expect(
            expectValidation(yield* app.admin("GET", `/organizations/${org.orgId}/messages?limit=${limit}`))
          ).toContain("limit")
        }
        expect(expectValidation(yield* app.admin("GET", `/organizations/${org.orgId}/messages?status=sent`))).toContain(
          "status"
        )
        expectError(
          yield* app.admin("GET", `/organizations/${org.orgId}/messages?cursor=garbage`),
          400,
          "invalid_cursor"
        )
        expectError(yield* app.admin("GET", `/organizations/${unknownUuid}/messages`), 404, "not_found")
      })
    )

    it.effect("needs the operator token", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.call("GET", `/admin/v1/organizations/${org.orgId}/messages`), 401, "invalid_api_key")
        expectError(
          yield* app.call("GET", `/admin/v1/organizations/${org.orgId}/messages`, { token: org.apiKey }),
          401,
          "invalid_api_key"
        )
      })
    )
  })

  describe(`GET /admin/v1/organizations/{org_id}/batches (${backend})`, () => {
    it.effect("lists batches newest first with counts that follow their messages", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* app.newOrg({ credits: 100 })
        const sendAt = new Date((yield* app.now) + 60_000).toISOString()
        const batchIds: Array<string> = []
        for (const recipients of [[testNumbers.delivered, testNumbers.rejected], [testNumbers.delivered]]) {
          const res = yield* app.call("POST", batchesPath, {
            token: org.apiKey,
            headers: { "idempotency-key": `batch-${batchIds.length}` },
            body: { recipients, text: "Batch", send_at: sendAt }
          })
          expect(res.status, res.text).toBe(202)
          batchIds.push(res.body.id)
        }

        const before = yield* app.admin("GET", `/organizations/${org.orgId}/batches`)
        expect(before.status, before.text).toBe(200)
        expect(before.body.next_cursor).toBeNull()
        expect(before.body.results.map((b: Listed) => b.id).sort()).toEqual([...batchIds].sort())
        expect(isNewestFirst(before.body.results)).toBe(true)
        const first = before.body.results.find((b: Listed) => b.id === batchIds[0])
        expect(first).toMatchObject({ recipient_count: 2, credits_reserved: 2, send_at: sendAt })
        expect(first.counts).toMatchObject({ scheduled: 2, accepted: 0, failed: 0 })

        yield* app.advance(63_000) // send time + the 2 s receipt delay
        const after = yield* app.admin("GET", `/organizations/${org.orgId}/batches`)
        const counts = after.body.results.find((b: Listed) => b.id === batchIds[0]).counts
        expect(counts).toEqual({
          scheduled: 0,
          processing: 0,
          accepted: 0,
          delivered: 1,
          undeliverable: 0,
          blocked: 0,
          failed: 1,
          unknown: 0
        })

        // the members appear in the message list with their batch
        const messages = yield* app.admin("GET", `/organizations/${org.orgId}/messages`)
        expect(messages.body.results.filter((m: Listed) => m.batch_id === batchIds[0])).toHaveLength(2)

        const paged = yield* allPages(`/organizations/${org.orgId}/batches`, 1)
        expect(paged.map((p) => p.results.length)).toEqual([1, 1])
        expect(paged.flatMap((p) => p.results.map((b) => b.id)).sort()).toEqual([...batchIds].sort())
      })
    )

    it.effect("answers an empty list, 404 for an unknown organisation and 400 for a bad cursor", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* app.newOrg()
        expect((yield* app.admin("GET", `/organizations/${org.orgId}/batches`)).body).toEqual({
          results: [],
          next_cursor: null
        })
        expectError(yield* app.admin("GET", `/organizations/${unknownUuid}/batches`), 404, "not_found")
        expectError(
          yield* app.admin("GET", `/organizations/${org.orgId}/batches?cursor=garbage`),
          400,
          "invalid_cursor"
        )
      })
    )
  })

  describe(`POST /admin/v1/organizations/{org_id}/messages/{message_id}/receipt (${backend})`, () => {
    /** The stored receipts of a message's provider reference: (outcome, state). */
    const storedReceipts = (id: string) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ outcome: string; state: string }>`SELECT r.outcome, r.state FROM provider_receipts r
          JOIN messages m ON m.provider_message_id = r.provider_ref WHERE m.id = ${id}`
      })

    it.effect.each(["delivered", "undeliverable"] as const)(
      "makes the simulator send a %s receipt for an accepted message, applied through the inbox",
      (outcome) =>
        Effect.gen(function* () {
          const app = yield* App
          const org = yield* app.newOrg({ credits: 10 })
          const { id } = yield* create(org.apiKey, { to: testNumbers.acceptedNoReceipt, text: "No receipt ever" })
          expect(yield* statusOf(org.apiKey, id)).toBe("accepted")

          const res = yield* app.admin("POST", receiptPath(org.orgId, id), { outcome })
          expect(res.status, res.text).toBe(200)
          expect(res.body).toMatchObject({ id, status: outcome, to: testNumbers.acceptedNoReceipt })
          expect(res.body.delivery_time).toMatch(isoInstant)
          expect(res.body.timeline.at(-1)).toMatchObject({
            from_status: "accepted",
            to_status: outcome,
            source: "receipt"
          })
          expect(yield* statusOf(org.apiKey, id)).toBe(outcome)
          // applied by the statement that received it (its timeline's last entry says so): nothing is kept
          expect(yield* storedReceipts(id)).toEqual([])

          // final now: a second receipt is refused
          expectConflict(
            yield* app.admin("POST", receiptPath(org.orgId, id), { outcome: "delivered" }),
            "message_not_accepted",
            id
          )
        })
    )

    it.effect("replaces the receipt the test number would send later", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* app.newOrg({ credits: 10 })
        const { id } = yield* create(org.apiKey, { to: testNumbers.delivered, text: "Delivered later" })
        const res = yield* app.admin("POST", receiptPath(org.orgId, id), { outcome: "undeliverable" })
        expect(res.body.status, res.text).toBe("undeliverable")
        yield* app.advance(10_000)
        expect(yield* statusOf(org.apiKey, id)).toBe("undeliverable")
      })
    )

    it.effect("409 message_not_accepted for a message that is not accepted (failed, unknown)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* app.newOrg({ credits: 10 })
        for (const to of [testNumbers.rejected, testNumbers.unknownForGood]) {
          const { id } = yield* create(org.apiKey, { to, text: "Not accepted" })
          expectConflict(
            yield* app.admin("POST", receiptPath(org.orgId, id), { outcome: "delivered" }),
            "message_not_accepted",
            id
          )
          expect(yield* storedReceipts(id)).toEqual([])
        }
      })
    )

    it.effect("404 for an unknown message or one of another organisation; 400 for a bad outcome", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* app.newOrg({ credits: 10 })
        const other = yield* app.newOrg({ credits: 10 })
        const { id } = yield* create(other.apiKey, { to: testNumbers.acceptedNoReceipt, text: "Theirs" })
        expectError(yield* app.admin("POST", receiptPath(org.orgId, id), { outcome: "delivered" }), 404, "not_found")
        expectError(
          yield* app.admin("POST", receiptPath(org.orgId, unknownUuid), { outcome: "delivered" }),
          404,
          "not_found"
        )
        expect(expectValidation(yield* app.admin("POST", receiptPath(other.orgId, id), { outcome: "read" }))).toContain(
          "outcome"
        )
        expect(expectValidation(yield* app.admin("POST", receiptPath(other.orgId, id), {}))).toContain("outcome")
        expect(yield* statusOf(other.apiKey, id)).toBe("accepted")
      })
    )
  })
})

/** A loopback port nothing listens on. */
const deadPort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })

/** An app with SMS_PROVIDER=smpp towards a port nothing listens on. */
const smppOptions = Effect.gen(function* () {
  const decoded = decodeEnv({
    SMS_PROVIDER: "smpp",
    SMS_SMPP_URL: `smpp://sim:sim@127.0.0.1:${yield* Effect.promise(deadPort)}`,
    SMS_SMPP_RESPONSE_TIMEOUT_MS: "200"
  })
  if (!decoded.ok) throw new Error(decoded.errors.join("; "))
  return { config: { provider: "smpp", smpp: decoded.config.smpp } } satisfies TestAppOptions
})

withApp(smppOptions)(`the receipt action with SMS_PROVIDER=smpp (${backend})`, (it) => {
  it.effect("409 provider_not_simulator: only the SMSC sends receipts", () =>
    Effect.gen(function* () {
      const smppApp = yield* App
      const org = yield* smppApp.newOrg({ credits: 10 })
      const { id } = yield* create(org.apiKey, { to: testNumbers.acceptedNoReceipt, text: "Through SMPP" })
      const res = yield* smppApp.admin("POST", receiptPath(org.orgId, id), { outcome: "delivered" })
      expectConflict(res, "provider_not_simulator", id)
    })
  )
})
