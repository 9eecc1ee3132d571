/**
 * Verifying an unknown send on a OneAPI route (docs/operators.md#oneapi-routes): with
 * `verify_by_correlator`, the same request under the same `clientCorrelator`, its answer read as
 * evidence; without it, nothing is asked (never a new send).
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import type { QueryResult } from "../../../src/provider/Provider.ts"
import { created, fakeOneApiPerFile, requestError, type FakeReply } from "./FakeOneApi.ts"
import { makeRoute, responseTimeoutMs, submission } from "./support.ts"

const fake = fakeOneApiPerFile()

const query = (verifyByCorrelator: boolean, reply: FakeReply) =>
  Effect.gen(function* () {
    fake().onSend = () => reply
    const route = yield* makeRoute(fake().settings({ verifyByCorrelator }))
    const s = submission()
    const result = yield* route.query({ ...s, providerRef: null }, (yield* Clock.currentTimeMillis) + responseTimeoutMs)
    return { result, correlator: s.messageId }
  })

describe("verification of an unknown OneAPI send", () => {
  it.live.each<{ readonly answer: string; readonly reply: FakeReply; readonly tag: QueryResult["_tag"] }>([
    { answer: "201", reply: created(1), tag: "Accepted" },
    {
      answer: "409 SVC0005",
      reply: requestError(409, "serviceException", "SVC0005", "Duplicate correlator"),
      tag: "Accepted"
    },
    {
      answer: "400 service exception",
      reply: requestError(400, "serviceException", "SVC0002", "Invalid input value"),
      tag: "NotReceived"
    },
    {
      answer: "403 policy exception",
      reply: requestError(403, "policyException", "POL0001", "Not allowed"),
      tag: "NotReceived"
    },
    { answer: "500", reply: { status: 500 }, tag: "Unknown" }
  ])("with verify_by_correlator, the same request answered $answer: $tag", ({ reply, tag }) =>
    Effect.gen(function* () {
      const { result, correlator } = yield* query(true, reply)
      expect(result._tag).toBe(tag)
      expect(fake().sends).toHaveLength(1)
      expect(fake().sends[0]?.json.outboundSMSMessageRequest.clientCorrelator).toBe(correlator)
    })
  )

  it.live("without verify_by_correlator: Unknown, and nothing is sent", () =>
    Effect.gen(function* () {
      const { result } = yield* query(false, created(1))
      expect(result).toEqual({ _tag: "Unknown" })
      expect(fake().sends).toHaveLength(0)
      expect(fake().tokenRequests).toHaveLength(0)
    })
  )
})
