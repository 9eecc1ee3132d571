/** What a stored Idempotency-Key means for a new request (docs/integrators.md#idempotency): replay, 409 or 410. */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { judgeStoredKey, type KeyRow } from "../../src/idempotency/Idempotency.ts"

const done: KeyRow = {
  fingerprint: "f1",
  state: "done",
  responseStatus: 201,
  responseBody: `{"id":"m1","to":"+261340000001"}`,
  responseLocation: "/api/sms/v2/messages/m1/",
  erased: false
}

const judged = (row: KeyRow, fingerprint: string) => {
  const exit = Effect.runSyncExit(judgeStoredKey(row, fingerprint))
  return Exit.isSuccess(exit)
    ? exit.value
    : Effect.runSync(
        Effect.flip(judgeStoredKey(row, fingerprint)).pipe(Effect.map((e) => ({ _tag: e._tag, error: e.error })))
      )
}

describe("judgeStoredKey", () => {
  it("replays the stored answer to the identical request: status, parsed body, Location", () => {
    expect(judged(done, "f1")).toEqual({
      _tag: "Replay",
      answer: { status: 201, body: { id: "m1", to: "+261340000001" }, location: "/api/sms/v2/messages/m1/" }
    })
    expect(judged({ ...done, responseStatus: 502, responseBody: null, responseLocation: null }, "f1")).toEqual({
      _tag: "Replay",
      answer: { status: 502, body: null, location: null }
    })
  })

  it("409 idempotency_conflict for other content, whatever else is stored (erased or in progress too)", () => {
    for (const row of [
      done,
      { ...done, erased: true },
      { ...done, state: "in_progress" as const, responseStatus: null }
    ]) {
      expect(judged(row, "f2")).toEqual({
        _tag: "IdempotencyConflict",
        error: {
          code: "idempotency_conflict",
          message: "This Idempotency-Key was already used with different content; do not change the key automatically"
        }
      })
    }
  })

  it("410 personal_data_erased once the message is erased, even while another answer is stored", () => {
    expect(judged({ ...done, erased: true }, "f1")).toEqual({
      _tag: "PersonalDataErased",
      error: {
        code: "personal_data_erased",
        message: "The personal data of this message was erased; do not resubmit it with a new key"
      }
    })
  })

  it("409 idempotency_in_progress while the identical request has no answer", () => {
    const inProgress = {
      _tag: "IdempotencyInProgress",
      error: {
        code: "idempotency_in_progress",
        message: "An identical request with this Idempotency-Key is still processing; retry identically later"
      }
    }
    expect(judged({ ...done, state: "in_progress", responseStatus: null, responseBody: null }, "f1")).toEqual(
      inProgress
    )
    expect(judged({ ...done, state: "in_progress" }, "f1")).toEqual(inProgress)
    expect(judged({ ...done, responseStatus: null }, "f1")).toEqual(inProgress)
  })
})
