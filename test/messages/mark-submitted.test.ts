/**
 * An immediate send whose message cannot be marked as handed over (the database fails right
 * after its admission): the mark is retried for a while; if it keeps failing, the message is
 * settled as never sent (it never reached the provider) instead of being left `processing`,
 * which nothing would settle while its process lives, its key answering 409 in progress for good.
 */
import { Context, Effect, Layer } from "effect"
import { SqlError } from "effect/sql"
import { DatabaseUnavailable } from "../../src/db/DatabaseUnavailable.ts"
import { expect } from "@effect/vitest"
import { Idempotency } from "../../src/idempotency/Idempotency.ts"
import { Messages } from "../../src/messages/Messages.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { balanceOf, bodyOf, messagesPath } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

const connectionLost = new DatabaseUnavailable(
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: new Error("Connection terminated unexpectedly"),
      message: "connection lost",
      operation: "query"
    })
  })
)

/** Creates an immediate send through Messages over the app's services, `markSubmitted` failing its first `failures` calls. */
const createFailingMark = (
  failures: number,
  orgId: string,
  key: string,
  c: { readonly to: string; readonly text: string }
) =>
  Effect.gen(function* () {
    const store = yield* MessageStore
    let left = failures
    const failing = MessageStore.of({
      ...store,
      markSubmitted: (organisationId, ids, at) =>
        Effect.suspend(() => (left-- > 0 ? Effect.fail(connectionLost) : store.markSubmitted(organisationId, ids, at)))
    })
    const messages = yield* Layer.build(Layer.fresh(Messages.layer)).pipe(
      Effect.provideService(MessageStore, failing),
      Effect.map(Context.get(Messages)),
      Effect.scoped
    )
    const fingerprint = (yield* Idempotency).fingerprint("messages", bodyOf(c))
    return yield* messages.create(orgId, key, fingerprint, { ...c, senderName: undefined, segments: 1, sendAt: null })
  })

withApp()(`an immediate send whose mark as handed over fails (${backend})`, (it) => {
  it.effect("is marked on a retry and sent once when the database comes back within the retries", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId } = yield* app.newOrg({ credits: 1 })
      const { answer } = yield* createFailingMark(2, orgId, "mark-fails-twice", {
        to: "+261341234567",
        text: "marked at last"
      })
      expect({ status: answer.status, messageStatus: (answer.body as { status: string }).status }).toEqual({
        status: 201,
        messageStatus: "accepted"
      })
      const id = (answer.body as { id: string }).id
      expect(app.calls.submits.get(id)).toBe(1)
      expect(yield* balanceOf(orgId)).toEqual({ total: 0, reserved: 0, available: 0 })
    })
  )

  it.effect(
    "is settled as never sent when the database keeps failing: failed, credits released, never submitted, its key answered",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 1 })
        const c = { to: "+261341234567", text: "never marked" }
        const { answer } = yield* createFailingMark(1_000, orgId, "mark-keeps-failing", c)
        const body = answer.body as { message_id: string; error: { code: string } }
        expect({ status: answer.status, code: body.error.code }).toEqual({ status: 503, code: "dispatch_unavailable" })
        expect(app.calls.submits.get(body.message_id)).toBeUndefined()
        expect(
          (yield* app.timeline(orgId, body.message_id)).map((t) => `${t.fromStatus ?? "-"}>${t.toStatus}@${t.source}`)
        ).toEqual(["->processing@admission", "processing>failed@dispatch"])
        expect(yield* balanceOf(orgId)).toEqual({ total: 1, reserved: 0, available: 1 })
        const replay = yield* app.call("POST", messagesPath, {
          token: apiKey,
          body: bodyOf(c),
          headers: { "idempotency-key": "mark-keeps-failing" }
        })
        expect({
          status: replay.status,
          body: replay.body,
          replayed: replay.headers.get("idempotent-replayed")
        }).toEqual({ status: 503, body: answer.body, replayed: "true" })
      })
  )
})
