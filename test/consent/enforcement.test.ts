/**
 * Opt-outs enforced (docs/two-way.md): a message to an opted-out
 * number is refused with nothing stored, a batch admits the others and creates the opted-out
 * members `failed` without a credit (400 when every recipient opted out), and a scheduled message
 * whose recipient opts out before its turn fails then, without a provider call, its credits released.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ordinaryNumbers, postBatch } from "../batches/support.ts"
import { balanceOf, create, messagesPath, statusOf } from "../support/Messages.ts"
import { App, withApp } from "../support/TestApp.ts"

const optOutPath = (phone: string) => `/api/sms/v2/opt-outs/${encodeURIComponent(phone)}/`
const hour = 3_600_000

const messageCount = (orgId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::integer AS n FROM messages WHERE organisation_id = ${orgId}`,
      (rows) => rows[0]!.n
    )
  )

describe("opt-outs enforced", { timeout: 180_000 }, () => {
  withApp({ label: "consent_enforcement", config: { clock: "test" } })((it) => {
    it.effect("refuses a message to an opted-out number, stores nothing, and takes it once the number opts in", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const [to] = ordinaryNumbers(1, 7100)
        expect((yield* app.call("PUT", optOutPath(to!), { token: apiKey })).status).toBe(201)
        for (const sendAt of [undefined, (yield* app.now) + hour]) {
          const refused = yield* app.call("POST", messagesPath, {
            token: apiKey,
            headers: { "idempotency-key": `opted-${sendAt}` },
            body: { to, text: "Salama", ...(sendAt === undefined ? {} : { send_at: new Date(sendAt).toISOString() }) }
          })
          expect(refused.status).toBe(400)
          expect(refused.body.error.code).toBe("validation_error")
          expect(refused.body.error.details).toEqual([
            { field: "to", message: "opted out of this organisation's messages" }
          ])
        }
        expect(yield* messageCount(orgId)).toBe(0)
        expect(yield* balanceOf(orgId)).toEqual({ total: 10, reserved: 0, available: 10 })
        expect((yield* app.call("DELETE", optOutPath(to!), { token: apiKey })).status).toBe(204)
        const again = yield* app.call("POST", messagesPath, {
          token: apiKey,
          headers: { "idempotency-key": "opted-undefined" },
          body: { to, text: "Salama" }
        })
        expect(again.status, again.text).toBe(201)
      })
    )

    it.effect("admits a batch, its opted-out members failed without a credit; 400 naming each when all opted out", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const recipients = ordinaryNumbers(3, 7200)
        expect((yield* app.call("PUT", optOutPath(recipients[1]!), { token: apiKey })).status).toBe(201)
        const sendAt = new Date((yield* app.now) + hour).toISOString()
        const batch = yield* postBatch(apiKey, { recipients, text: "Salama", send_at: sendAt })
        expect(batch.status, batch.text).toBe(202)
        expect(batch.body.credits_reserved).toBe(2)
        expect(batch.body.counts).toMatchObject({ scheduled: 2, failed: 1 })
        expect(yield* balanceOf(orgId)).toEqual({ total: 10, reserved: 2, available: 8 })
        const members = yield* app.call("GET", `/api/sms/v2/message-batches/${batch.body.id}/messages/`, {
          token: apiKey
        })
        const failed = members.body.results[1]
        expect(failed).toMatchObject({ to: recipients[1], status: "failed" })
        const shown = yield* app.admin("GET", `/organizations/${orgId}/messages/${failed.id}`)
        expect(shown.body.timeline.map((e: { to_status: string; source: string }) => [e.to_status, e.source])).toEqual([
          ["failed", "opted_out"]
        ])
        yield* app.advance(hour + 60_000)
        expect(app.calls.submits.get(failed.id)).toBeUndefined()
        expect(yield* statusOf(apiKey, members.body.results[0].id)).toBe("delivered")

        const all = ordinaryNumbers(2, 7300)
        for (const to of all) yield* app.call("PUT", optOutPath(to), { token: apiKey })
        const refused = yield* postBatch(apiKey, { recipients: all, text: "Salama", send_at: sendAt })
        expect(refused.status).toBe(400)
        expect(refused.body.error.details).toEqual([
          { field: "recipients[0]", message: "opted out of this organisation's messages" },
          { field: "recipients[1]", message: "opted out of this organisation's messages" }
        ])
      })
    )

    it.effect("fails a scheduled message whose recipient opted out before its turn, without a provider call", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const [to] = ordinaryNumbers(1, 7400)
        const { id, reply } = yield* create(apiKey, { to: to!, text: "Salama", sendAt: (yield* app.now) + hour })
        expect(reply.status).toBe(202)
        expect((yield* balanceOf(orgId)).reserved).toBe(1)
        expect((yield* app.call("PUT", optOutPath(to!), { token: apiKey })).status).toBe(201)
        yield* app.advance(hour + 1000)
        expect(yield* statusOf(apiKey, id)).toBe("failed")
        expect(app.calls.submits.get(id)).toBeUndefined()
        expect(yield* balanceOf(orgId)).toEqual({ total: 10, reserved: 0, available: 10 })
        const shown = yield* app.admin("GET", `/organizations/${orgId}/messages/${id}`)
        expect(shown.body.timeline.at(-1)).toMatchObject({ to_status: "failed", source: "opted_out" })
      })
    )
  })
})
