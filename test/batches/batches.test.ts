/**
 * POST /api/sms/v2/message-batches/, GET .../{batch_id}/ and GET .../{batch_id}/messages/ over
 * HTTP (docs/integrators.md#batches). The in-process app runs no workers, so every
 * member stays `scheduled` here; dispatch is covered by batch-dispatch.test.ts.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { expectError, expectValidation } from "../http/helpers.ts"
import { App, backend, withApp } from "../support/TestApp.ts"
import {
  batchPath,
  expectAdmitted,
  getBalance,
  getBatch,
  getPage,
  messagesPath,
  oneSegmentText,
  ordinaryNumbers,
  postBatch,
  readAll,
  twoSegmentText,
  withOffset,
  zeroCounts
} from "./support.ts"

/** A whole-second instant `ms` from now. */
const fromNow = (ms: number) => new Date(Math.ceil((Date.now() + ms) / 1000) * 1000)
const tomorrow = () => fromNow(86_400_000)

const body = (recipients: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  recipients,
  text: oneSegmentText,
  send_at: tomorrow().toISOString(),
  ...extra
})

/** Deterministically shuffled ordinary numbers, so "submitted order" is not also sorted order. */
const shuffledNumbers = (n: number, base: number) => {
  const numbers = ordinaryNumbers(n, base)
  const out: Array<string> = []
  for (let i = 0; i < n; i++) out.push(numbers[(i * 37 + 11) % n]!)
  expect(new Set(out).size).toBe(n) // 37 is prime to every n used here
  return out
}

withApp()((it) => {
  describe(`message batch admission (${backend})`, () => {
    it.effect("0 recipients: 400 validation_error naming recipients, nothing reserved", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const res = yield* postBatch(apiKey, body([]))
        expect(expectValidation(res)).toContain("recipients")
        expect(yield* getBalance(apiKey)).toMatchObject({ total: 10, reserved: 0, available: 10 })
      })
    )

    it.effect("1 recipient: 202 with Location and the Batch (send_at normalised to UTC, all eight counts)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const sendAt = tomorrow()
        const before = Date.now()
        const res = yield* postBatch(
          apiKey,
          body(["+261340000001"], { text: twoSegmentText, send_at: withOffset(sendAt, "+03:00") })
        )
        const after = Date.now()
        const batch = expectAdmitted(res)
        expect(res.headers.get("location")).toBe(`/api/sms/v2/message-batches/${batch.id}/`)
        expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
        expect(res.headers.get("idempotent-replayed")).toBeNull()
        expect(batch.recipient_count).toBe(1)
        expect(batch.credits_reserved).toBe(2)
        expect(batch.send_at.endsWith("Z")).toBe(true)
        expect(new Date(batch.send_at).getTime()).toBe(sendAt.getTime())
        expect(batch.send_at).toBe(sendAt.toISOString())
        const created = new Date(batch.created_at).getTime()
        expect(created).toBeGreaterThanOrEqual(before - 1000)
        expect(created).toBeLessThanOrEqual(after + 1000)
        expect(batch.counts).toEqual({ ...zeroCounts(), scheduled: 1 })

        expect(yield* getBalance(apiKey)).toMatchObject({ total: 10, reserved: 2, available: 8 })
        expect(yield* getBatch(apiKey, batch.id)).toEqual(batch)

        const page = yield* getPage(apiKey, batch.id)
        expect(page.nextCursor).toBeNull()
        expect(page.results).toHaveLength(1)
        expect(page.results[0]).toMatchObject({
          to: "+261340000001",
          sender_name: "INFO",
          status: "scheduled",
          segments: 2,
          delivery_time: null
        })
        expect(new Date(page.results[0]!.send_at!).getTime()).toBe(sendAt.getTime())
        expect(page.results[0]!.send_at!.endsWith("Z")).toBe(true)
      })
    )

    it.effect("the explicit sender_name is used for every member", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const put = yield* app.admin("PUT", `/organizations/${orgId}/senders/PROMO`, { active: true })
        expect(put.status, put.text).toBe(200)
        const batch = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(3, 900), { sender_name: "PROMO" })))
        const { messages } = yield* readAll(apiKey, batch.id)
        expect(messages.map((m) => m.sender_name)).toEqual(["PROMO", "PROMO", "PROMO"])
      })
    )

    it.effect("1000 recipients: 202 and 1000 credits reserved; 2000 with a two-segment text", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 3000 })
        const one = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(1000, 0))))
        expect(one).toMatchObject({
          recipient_count: 1000,
          credits_reserved: 1000,
          counts: { ...zeroCounts(), scheduled: 1000 }
        })
        expect(yield* getBalance(apiKey)).toMatchObject({ total: 3000, reserved: 1000, available: 2000 })

        const two = expectAdmitted(
          yield* postBatch(apiKey, body(ordinaryNumbers(1000, 5000), { text: twoSegmentText }))
        )
        expect(two).toMatchObject({
          recipient_count: 1000,
          credits_reserved: 2000,
          counts: { ...zeroCounts(), scheduled: 1000 }
        })
        expect(yield* getBalance(apiKey)).toMatchObject({ total: 3000, reserved: 3000, available: 0 })
        expect((yield* getBatch(apiKey, two.id)).counts).toEqual({ ...zeroCounts(), scheduled: 1000 })
      })
    )

    it.effect("1001 recipients: 400 validation_error naming recipients, nothing reserved", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 2000 })
        const res = yield* postBatch(apiKey, body(ordinaryNumbers(1001, 0)))
        expect(expectValidation(res)).toContain("recipients")
        expect(yield* getBalance(apiKey)).toMatchObject({ total: 2000, reserved: 0, available: 2000 })
      })
    )

    it.effect("a duplicate is rejected with its position named, and nothing is created", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const [a, b, c] = ordinaryNumbers(3, 100)
        const key = "dup-key-1"
        const res = yield* postBatch(apiKey, body([a, b, a, c]), key)
        const fields = expectValidation(res)
        expect(fields).toEqual(["recipients.2"])
        expect(yield* getBalance(apiKey)).toMatchObject({ total: 10, reserved: 0, available: 10 })
        // nothing was stored under the key either: the corrected request is a first admission
        const fixed = yield* postBatch(apiKey, body([a, b, c]), key)
        expectAdmitted(fixed)
        expect(fixed.headers.get("idempotent-replayed")).toBeNull()
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 3, available: 7 })
      })
    )

    it.effect("every repeat is named, each by its own position (duplicates are not removed)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const [a, b] = ordinaryNumbers(2, 200)
        const res = yield* postBatch(apiKey, body([a, b, a, b, a]))
        expect(expectValidation(res)).toEqual(["recipients.2", "recipients.3", "recipients.4"])
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 0, available: 10 })
      })
    )

    it.effect.each<readonly [string, string, number]>([
      ["a foreign number", "+33612345678", 37],
      ["a Malagasy landline", "+261201234567", 0],
      ["a national format", "0340000001", 49],
      ["a number too short", "+26134000000", 12],
      ["a number with a space", "+261 340000001", 25]
    ])("one bad number among many (%s) is rejected with its position, nothing created", ([_name, bad, position]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 100 })
        const recipients = ordinaryNumbers(50, 300)
        recipients[position] = bad
        const key = `bad-number-${position}`
        const res = yield* postBatch(apiKey, body(recipients), key)
        expect(expectValidation(res)).toEqual([`recipients.${position}`])
        expect(yield* getBalance(apiKey)).toMatchObject({ total: 100, reserved: 0, available: 100 })
        recipients[position] = ordinaryNumbers(1, 999)[0]!
        expectAdmitted(yield* postBatch(apiKey, body(recipients), key))
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 50, available: 50 })
      })
    )

    it.effect("insufficient credits: 409 insufficient_credits and the balance is unchanged (all or nothing)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 5 })
        const key = "credits-key"
        expectError(yield* postBatch(apiKey, body(ordinaryNumbers(6, 400)), key), 409, "insufficient_credits")
        expect(yield* getBalance(apiKey)).toEqual({ total: 5, reserved: 0, available: 5, valid_until: null })
        // three two-segment messages need 6 credits
        expectError(
          yield* postBatch(apiKey, body(ordinaryNumbers(3, 400), { text: twoSegmentText })),
          409,
          "insufficient_credits"
        )
        expect(yield* getBalance(apiKey)).toEqual({ total: 5, reserved: 0, available: 5, valid_until: null })
        // not stored: the same key is free for an admission that fits exactly
        const fits = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(5, 400)), key))
        expect(fits.credits_reserved).toBe(5)
        expect(yield* getBalance(apiKey)).toEqual({ total: 5, reserved: 5, available: 0, valid_until: null })
      })
    )

    it.effect("missing send_at: 400 validation_error naming send_at (a batch is scheduled only)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const res = yield* postBatch(apiKey, { recipients: ordinaryNumbers(2, 500), text: oneSegmentText })
        expect(expectValidation(res)).toContain("send_at")
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 0 })
      })
    )

    it.effect("past send_at: 400 invalid_schedule", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        for (const when of [fromNow(-60_000), fromNow(-86_400_000 * 365)]) {
          const res = yield* postBatch(apiKey, body(ordinaryNumbers(2, 500), { send_at: withOffset(when, "+03:00") }))
          expectError(res, 400, "invalid_schedule")
        }
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 0, available: 10 })
      })
    )

    it.effect("send_at without a timezone offset: 400 validation_error naming send_at", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        const local = tomorrow().toISOString().slice(0, 19)
        for (const value of [local, local.replace("T", " ")]) {
          const res = yield* postBatch(apiKey, body(ordinaryNumbers(2, 500), { send_at: value }))
          expect(expectValidation(res)).toEqual(["send_at"])
        }
        const garbage = yield* postBatch(apiKey, body(ordinaryNumbers(2, 500), { send_at: "tomorrow at noon" }))
        expect(expectValidation(garbage)).toContain("send_at")
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 0 })
      })
    )

    it.effect.each(["TOO LONG NAME", "bad-name", " LEADING", "TRAILING ", "ÉCOLE"])(
      "invalid sender name %j: 400 invalid_sender_name",
      (name) =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: 10 })
          const res = yield* postBatch(apiKey, body(ordinaryNumbers(2, 600), { sender_name: name }))
          expect(res.status, res.text).toBe(400)
          expect(["invalid_sender_name", "validation_error"]).toContain(res.body.error.code)
          if (name.length <= 11) expectError(res, 400, "invalid_sender_name")
          expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 0 })
        })
    )

    it.effect("a key without sms.schedule: 403 insufficient_permissions, nothing reserved", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const key = yield* app.admin("POST", `/organizations/${orgId}/api-keys`, {
          permissions: ["sms.send", "delivery.read", "balance.read", "contacts.manage"]
        })
        expect(key.status, key.text).toBe(201)
        expectError(yield* postBatch(key.body.api_key, body(ordinaryNumbers(2, 700))), 403, "insufficient_permissions")
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 0, available: 10 })
      })
    )

    it.effect("a key without delivery.read: 403 on both GETs (and may still create)", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const key = yield* app.admin("POST", `/organizations/${orgId}/api-keys`, { permissions: ["sms.schedule"] })
        expect(key.status, key.text).toBe(201)
        const scheduleOnly: string = key.body.api_key
        const batch = expectAdmitted(yield* postBatch(scheduleOnly, body(ordinaryNumbers(2, 700))))
        expectError(
          yield* app.call("GET", batchPath(batch.id), { token: scheduleOnly }),
          403,
          "insufficient_permissions"
        )
        expectError(
          yield* app.call("GET", messagesPath(batch.id), { token: scheduleOnly }),
          403,
          "insufficient_permissions"
        )
        yield* getBatch(apiKey, batch.id)
      })
    )
  })

  describe(`message batch idempotency (${backend})`, () => {
    it.effect("Idempotency-Key missing or malformed: 400 invalid_idempotency_key, nothing reserved", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 10 })
        expectError(yield* postBatch(apiKey, body(ordinaryNumbers(2, 800)), null), 400, "invalid_idempotency_key")
        expectError(
          yield* postBatch(apiKey, body(ordinaryNumbers(2, 800)), "has space"),
          400,
          "invalid_idempotency_key"
        )
        expectError(
          yield* postBatch(apiKey, body(ordinaryNumbers(2, 800)), "k".repeat(129)),
          400,
          "invalid_idempotency_key"
        )
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 0, available: 10 })
      })
    )

    it.effect(
      "a replay answers 202 with the same body and Location, Idempotent-Replayed: true, and reserves nothing more",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: 20 })
          const request = body(ordinaryNumbers(4, 810), {
            text: twoSegmentText,
            send_at: withOffset(tomorrow(), "-05:00")
          })
          const first = yield* postBatch(apiKey, request, "replay-key")
          const batch = expectAdmitted(first)
          expect(first.headers.get("idempotent-replayed")).toBeNull()
          expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 8, available: 12 })

          const again = yield* postBatch(apiKey, request, "replay-key")
          expect(again.status, again.text).toBe(202)
          expect(again.body).toEqual(batch)
          expect(again.headers.get("location")).toBe(first.headers.get("location"))
          expect(again.headers.get("idempotent-replayed")).toBe("true")

          // identical content = same JSON after canonicalisation: key order does not matter
          const reordered = { send_at: request.send_at, text: request.text, recipients: request.recipients }
          const third = yield* postBatch(apiKey, reordered, "replay-key")
          expect(third.status, third.text).toBe(202)
          expect(third.body).toEqual(batch)
          expect(third.headers.get("idempotent-replayed")).toBe("true")

          expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 8, available: 12 })
          expect((yield* readAll(apiKey, batch.id)).messages).toHaveLength(4)
        })
    )

    it.effect("the same key with other content: 409 idempotency_conflict, nothing more reserved", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 20 })
        const request = body(ordinaryNumbers(3, 820))
        expectAdmitted(yield* postBatch(apiKey, request, "conflict-key"))
        const variants = [
          { ...request, recipients: [...request.recipients].reverse() },
          { ...request, recipients: request.recipients.slice(0, 2) },
          { ...request, text: `${oneSegmentText}!` },
          { ...request, sender_name: "INFO" }
        ]
        for (const variant of variants) {
          expectError(yield* postBatch(apiKey, variant, "conflict-key"), 409, "idempotency_conflict")
        }
        expect(yield* getBalance(apiKey)).toMatchObject({ reserved: 3, available: 17 })
      })
    )

    it.effect("keys are scoped per organisation: another organisation's same key is a new admission", () =>
      Effect.gen(function* () {
        const app = yield* App
        const one = yield* app.newOrg({ credits: 10 })
        const two = yield* app.newOrg({ credits: 10 })
        const request = body(ordinaryNumbers(2, 830))
        const a = expectAdmitted(yield* postBatch(one.apiKey, request, "shared-key"))
        const b = yield* postBatch(two.apiKey, request, "shared-key")
        expectAdmitted(b)
        expect(b.headers.get("idempotent-replayed")).toBeNull()
        expect(b.body.id).not.toBe(a.id)
      })
    )
  })

  describe(`message batch lookups (${backend})`, () => {
    it.effect("another organisation's batch: 404 not_found on both GETs", () =>
      Effect.gen(function* () {
        const app = yield* App
        const owner = yield* app.newOrg({ credits: 10 })
        const other = yield* app.newOrg({ credits: 10 })
        const batch = expectAdmitted(yield* postBatch(owner.apiKey, body(ordinaryNumbers(2, 840))))
        expectError(yield* app.call("GET", batchPath(batch.id), { token: other.apiKey }), 404, "not_found")
        expectError(yield* app.call("GET", messagesPath(batch.id), { token: other.apiKey }), 404, "not_found")
      })
    )

    it.effect.each([
      "not-a-uuid",
      "00000000-0000-0000-0000-000000000000",
      "3f2a1c4e-9b7d-4e21-8c3a-5d6e7f8a9b0c",
      "1234"
    ])("unknown or garbage batch id %j: 404 not_found on both GETs", (id) =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg()
        expectError(yield* app.call("GET", batchPath(id), { token: apiKey }), 404, "not_found")
        expectError(yield* app.call("GET", messagesPath(id), { token: apiKey }), 404, "not_found")
      })
    )

    it.effect("a batch of 250 lists as pages of 100, 100 and 50 in submitted order, next_cursor null on the last", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 300 })
        const recipients = shuffledNumbers(250, 1000)
        const batch = expectAdmitted(yield* postBatch(apiKey, body(recipients)))

        const first = yield* getPage(apiKey, batch.id)
        expect(first.results.map((m) => m.to)).toEqual(recipients.slice(0, 100))
        expect(typeof first.nextCursor).toBe("string")
        const second = yield* getPage(apiKey, batch.id, first.nextCursor!)
        expect(second.results.map((m) => m.to)).toEqual(recipients.slice(100, 200))
        expect(typeof second.nextCursor).toBe("string")
        const third = yield* getPage(apiKey, batch.id, second.nextCursor!)
        expect(third.results.map((m) => m.to)).toEqual(recipients.slice(200))
        expect(third.nextCursor).toBeNull()

        const all = [...first.results, ...second.results, ...third.results]
        expect(new Set(all.map((m) => m.id)).size).toBe(250)
        expect(all.every((m) => m.status === "scheduled" && m.segments === 1 && m.delivery_time === null)).toBe(true)
        // a cursor is reusable as is: the same page again
        expect((yield* getPage(apiKey, batch.id, first.nextCursor!)).results).toEqual(second.results)

        const counts = (yield* getBatch(apiKey, batch.id)).counts
        expect(counts).toEqual({ ...zeroCounts(), scheduled: 250 })
      })
    )

    it.effect.each<readonly [number, ReadonlyArray<number>]>([
      [1, [1]],
      [99, [99]],
      [100, [100]],
      [101, [100, 1]],
      [200, [100, 100]],
      [201, [100, 100, 1]]
    ])("a batch of %i lists as pages %j", ([n, sizes]) =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: n })
        const recipients = shuffledNumbers(n, 2000)
        const batch = expectAdmitted(yield* postBatch(apiKey, body(recipients)))
        const all = yield* readAll(apiKey, batch.id)
        expect(all.sizes).toEqual(sizes)
        expect(all.messages.map((m) => m.to)).toEqual(recipients)
      })
    )

    it.effect("a cursor of another batch: 400 invalid_cursor", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 400 })
        const a = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(150, 3000))))
        const b = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(150, 4000))))
        const cursorOfA = (yield* getPage(apiKey, a.id)).nextCursor!
        expectError(yield* app.call("GET", messagesPath(b.id, cursorOfA), { token: apiKey }), 400, "invalid_cursor")
        // the cursor still works for its own batch
        expect((yield* getPage(apiKey, a.id, cursorOfA)).results).toHaveLength(50)
      })
    )

    /** The batch's first next_cursor and a one-character change of it at `i` (to the next base64url letter). */
    const tamper = (cursor: string, i: number) => {
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
      const index = alphabet.indexOf(cursor[i]!)
      const replacement = index === -1 ? "A" : alphabet[(index + 1) % alphabet.length]!
      return `${cursor.slice(0, i)}${replacement}${cursor.slice(i + 1)}`
    }

    it.effect("a tampered cursor (one character changed at its start, middle or end): 400 invalid_cursor", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 250 })
        const batch = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(250, 5000))))
        const cursor = (yield* getPage(apiKey, batch.id)).nextCursor!
        for (const i of [0, 10, Math.floor(cursor.length / 2), cursor.length - 1]) {
          const res = yield* app.call("GET", messagesPath(batch.id, tamper(cursor, i)), { token: apiKey })
          expectError(res, 400, "invalid_cursor")
        }
      })
    )

    it.effect("every one-character change of a cursor is refused with 400 invalid_cursor", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 250 })
        const batch = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(250, 5500))))
        const cursor = (yield* getPage(apiKey, batch.id)).nextCursor!
        const accepted: Array<string> = []
        for (let i = 0; i < cursor.length; i++) {
          const tampered = tamper(cursor, i)
          const res = yield* app.call("GET", messagesPath(batch.id, tampered), { token: apiKey })
          if (res.status !== 400 || res.body?.error?.code !== "invalid_cursor") {
            accepted.push(`position ${i} (${cursor[i]} -> ${tampered[i]}): ${res.status}`)
          }
        }
        expect(accepted, `next_cursor ${cursor}`).toEqual([])
      })
    )

    it.effect.each(["garbage", "", "0", "100", "bm90IGEgY3Vyc29y", "a.b", "a.b.c", "https://example.com/?page=2"])(
      "a garbage cursor %j: 400 invalid_cursor",
      (cursor) =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: 150 })
          const batch = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(150, 6000))))
          expectError(yield* app.call("GET", messagesPath(batch.id, cursor), { token: apiKey }), 400, "invalid_cursor")
        })
    )

    it.effect("a forged cursor (right batch, another position, no valid signature): 400 invalid_cursor", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg({ credits: 250 })
        const batch = expectAdmitted(yield* postBatch(apiKey, body(ordinaryNumbers(250, 7000))))
        const cursor = (yield* getPage(apiKey, batch.id)).nextCursor!
        const [, signature] = cursor.split(".")
        const forged = `${Buffer.from(`${batch.id}:200`, "utf8").toString("base64url")}.${signature}`
        expectError(yield* app.call("GET", messagesPath(batch.id, forged), { token: apiKey }), 400, "invalid_cursor")
      })
    )
  })
})
