/**
 * Idempotency keys at the level of the service and its store (src/idempotency/), over the test
 * file's own database: claims, stored answers, their erasure and the request fingerprint.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import type { Answer } from "../../src/idempotency/Answer.ts"
import { Idempotency, type NewKey, type Route } from "../../src/idempotency/Idempotency.ts"
import { IdempotencyStore } from "../../src/idempotency/IdempotencyStore.ts"
import { Organisations } from "../../src/organisations/Organisations.ts"
import { ServiceSecret } from "../../src/secrets/ServiceSecret.ts"
import { appServices } from "../support/AppServices.ts"
import { backend } from "../support/TestApp.ts"

const at = new Date("2026-01-10T12:00:00Z")
const created: Answer = {
  status: 201,
  body: { id: "m", to: "+261340000001", sender_name: "INFO" },
  location: "/api/sms/v2/messages/m/"
}

const newOrganisation = Effect.gen(function* () {
  return (yield* (yield* Organisations).create("Idempotency test org", "KEYS")).id
})

/** The claim's outcome as a value: New, Replay with its answer, or the failing error's tag. */
const claimOutcome = (
  organisationId: string,
  route: Route,
  key: string,
  fingerprint: string,
  ids: Pick<NewKey, "messageId" | "batchId" | "answer">
) =>
  Effect.gen(function* () {
    const idempotency = yield* Idempotency
    return yield* idempotency.claim({ organisationId, route, key, fingerprint, ...ids }).pipe(
      Effect.map((c) => (c._tag === "Replay" ? { _tag: c._tag, answer: c.answer } : { _tag: c._tag })),
      Effect.catchTags({
        IdempotencyConflict: (e) => Effect.succeed({ _tag: e._tag }),
        IdempotencyInProgress: (e) => Effect.succeed({ _tag: e._tag }),
        PersonalDataErased: (e) => Effect.succeed({ _tag: e._tag })
      })
    )
  })

layer(appServices(), { excludeTestServices: true })(`Idempotency keys (${backend})`, (it) => {
  it.effect("a first claim is new; the identical request then waits (409 in progress); other content conflicts", () =>
    Effect.gen(function* () {
      const org = yield* newOrganisation
      const messageId = randomUUID()
      expect(yield* claimOutcome(org, "messages", "k1", "f1", { messageId })).toEqual({ _tag: "New" })
      expect(yield* claimOutcome(org, "messages", "k1", "f1", {})).toEqual({ _tag: "IdempotencyInProgress" })
      expect(yield* claimOutcome(org, "messages", "k1", "f2", {})).toEqual({ _tag: "IdempotencyConflict" })
      expect(yield* (yield* IdempotencyStore).inProgressMessage(org, "messages", "k1")).toBe(messageId)
      expect(yield* (yield* IdempotencyStore).answerOfMessage(org, messageId)).toBeUndefined()
    })
  )

  it.effect("a key is its organisation's and its route's: the same key elsewhere is new", () =>
    Effect.gen(function* () {
      const [a, b] = [yield* newOrganisation, yield* newOrganisation]
      expect(yield* claimOutcome(a, "messages", "k", "f1", {})).toEqual({ _tag: "New" })
      expect(yield* claimOutcome(b, "messages", "k", "f2", {})).toEqual({ _tag: "New" })
      expect(yield* claimOutcome(a, "message-batches", "k", "f3", {})).toEqual({ _tag: "New" })
      expect(yield* (yield* IdempotencyStore).inProgressMessage(a, "message-batches", "other")).toBeUndefined()
    })
  )

  it.effect("a claim answered at once replays its answer to the identical request", () =>
    Effect.gen(function* () {
      const org = yield* newOrganisation
      const messageId = randomUUID()
      const keys = yield* IdempotencyStore
      expect(yield* claimOutcome(org, "messages", "k", "f1", { messageId, answer: created })).toEqual({ _tag: "New" })
      expect(yield* claimOutcome(org, "messages", "k", "f1", {})).toEqual({ _tag: "Replay", answer: created })
      expect(yield* keys.inProgressMessage(org, "messages", "k")).toBeUndefined()
      expect(yield* keys.answerOfMessage(org, messageId)).toEqual(created)
    })
  )

  it.effect("the answer stored for an in-progress key is replayed, and a later one does not replace it", () =>
    Effect.gen(function* () {
      const org = yield* newOrganisation
      const [m1, m2] = [randomUUID(), randomUUID()]
      const keys = yield* IdempotencyStore
      yield* claimOutcome(org, "messages", "k1", "f1", { messageId: m1 })
      yield* claimOutcome(org, "messages", "k2", "f2", { messageId: m2 })
      const failed: Answer = {
        status: 502,
        body: { error: { code: "provider_rejected", message: "no" }, message_id: m2 },
        location: null
      }
      yield* keys.answerForMessages([], at)
      yield* keys.answerForMessages(
        [
          { organisationId: org, messageId: m1, answer: created },
          { organisationId: org, messageId: m2, answer: failed }
        ],
        at
      )
      expect(yield* claimOutcome(org, "messages", "k1", "f1", {})).toEqual({ _tag: "Replay", answer: created })
      expect(yield* claimOutcome(org, "messages", "k2", "f2", {})).toEqual({ _tag: "Replay", answer: failed })
      yield* keys.answerForMessages([{ organisationId: org, messageId: m1, answer: failed }], at)
      expect(yield* keys.answerOfMessage(org, m1)).toEqual(created)
      // another organisation's message of the same id is not touched
      const other = yield* newOrganisation
      yield* claimOutcome(other, "messages", "k1", "f1", { messageId: m1 })
      expect(yield* keys.inProgressMessage(other, "messages", "k1")).toBe(m1)
    })
  )

  it.effect("a key records what its request created: the message, or the batch", () =>
    Effect.gen(function* () {
      const org = yield* newOrganisation
      const [messageId, batchId] = [randomUUID(), randomUUID()]
      yield* claimOutcome(org, "messages", "m", "f1", { messageId })
      yield* claimOutcome(org, "message-batches", "b", "f2", { batchId, answer: created })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ key: string; messageId: string | null; batchId: string | null }>`SELECT key,
          message_id::text, batch_id::text FROM idempotency_keys WHERE organisation_id = ${org} ORDER BY key`
      expect(rows).toEqual([
        { key: "b", messageId: null, batchId },
        { key: "m", messageId, batchId: null }
      ])
    })
  )

  it.effect("erasure forgets the stored body of the message's key, and only that one", () =>
    Effect.gen(function* () {
      const org = yield* newOrganisation
      const [m1, m2] = [randomUUID(), randomUUID()]
      const keys = yield* IdempotencyStore
      yield* claimOutcome(org, "messages", "k1", "f1", { messageId: m1, answer: created })
      yield* claimOutcome(org, "messages", "k2", "f2", { messageId: m2, answer: created })
      yield* keys.eraseForMessages([{ organisationId: org, id: m1 }])
      expect(yield* keys.answerOfMessage(org, m1)).toBeUndefined()
      expect(yield* keys.answerOfMessage(org, m2)).toEqual(created)
    })
  )

  it.effect("the fingerprint is a keyed hash of the route and the canonical body", () =>
    Effect.gen(function* () {
      const { fingerprint } = yield* Idempotency
      const body = { to: "+261340000001", text: "Salama", sender_name: "INFO" }
      const f = fingerprint("messages", body)
      expect(f).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(fingerprint("messages", { sender_name: "INFO", text: "Salama", to: "+261340000001" })).toBe(f)
      expect(fingerprint("message-batches", body)).not.toBe(f)
      expect(fingerprint("messages", { ...body, text: "Salama!" })).not.toBe(f)
      expect(f).not.toContain("261340000001")
      const secret = yield* ServiceSecret
      expect(f).toBe(secret.sign(`messages\n{"sender_name":"INFO","text":"Salama","to":"+261340000001"}`))
    })
  )
})
