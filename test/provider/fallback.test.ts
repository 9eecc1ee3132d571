/**
 * Fallback routes through the whole service (docs/operators.md#fallback-routes), over one routing
 * file: `telma` (an SMSC that refuses every bind) falls back to `orange` (a OneAPI provider, the
 * fake), which falls back to `airtel` (an SMSC that works). A message telma never took is taken by
 * orange, its timeline and /metrics naming orange; one orange provably did not take either (no
 * token) goes on to airtel; one whose answer orange lost stays `unknown` and reaches no other route.
 */
import { afterAll, beforeAll, beforeEach, expect } from "@effect/vitest"
import { Effect } from "effect"
import type { Smsc } from "../../simulator/smsc/Smsc.ts"
import type { RouteSettings } from "../../src/config/SmppSettings.ts"
import { parseSamples, sampleValue } from "../observability/prometheus.ts"
import { create, statusOf } from "../support/Messages.ts"
import { adminToken, App, backend, withApp } from "../support/TestApp.ts"
import { FakeOneApi } from "./oneapi/FakeOneApi.ts"
import { credits, factsOf, smppConfig } from "./smpp/service.ts"
import { routeTo, startSmsc } from "./smpp/support.ts"

let down: Smsc
let up: Smsc
let fake: FakeOneApi

beforeAll(async () => {
  down = await startSmsc()
  down.refuseBinds = true
  up = await startSmsc()
  fake = await FakeOneApi.start()
})
beforeEach(() => fake.reset())
afterAll(async () => {
  await down?.dispose()
  await up?.dispose()
  await fake?.close()
})

const routes = (): ReadonlyArray<RouteSettings> => [
  routeTo(down, { name: "telma", prefixes: ["+26134"], fallback: "orange" }),
  routeTo(up, { name: "airtel", prefixes: ["+26133"], fallback: "telma" })
]

const appOptions = Effect.sync(() => ({
  label: "fallback_routes",
  config: {
    ...smppConfig(routes(), {
      responseTimeoutMs: 1500,
      oneapi: [fake.settings({ prefixes: ["+26132"], fallback: "airtel" })]
    }),
    publicUrl: "http://sms.test"
  }
}))

/** The operator's view of a message: its timeline, each move with the route that took it. */
const operatorTimeline = (orgId: string, id: string) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).admin("GET", `/organizations/${orgId}/messages/${id}`)
    expect(res.status, res.text).toBe(200)
    return res.body.timeline as ReadonlyArray<{ to_status: string; route?: string }>
  })

const metric = (name: string, labels: Record<string, string>) =>
  Effect.gen(function* () {
    const res = yield* (yield* App).call("GET", "/metrics", { token: adminToken, headers: { accept: "text/plain" } })
    return sampleValue(parseSamples(res.text), name, labels) ?? 0
  })

withApp(appOptions)(`fallback routes (${backend})`, (it) => {
  it.effect(
    "an SMSC refusing binds: its message is taken by the OneAPI fallback, named on the timeline and /metrics",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const before = yield* metric("sms_provider_fallbacks_total", { from: "telma", to: "orange" })
        const { id, reply } = yield* create(apiKey, { to: "+261341234567", text: "via the fallback" })
        expect(reply.status, reply.text).toBe(201)
        expect(yield* statusOf(apiKey, id)).toBe("accepted")
        expect(fake.sends.map((r) => r.json.outboundSMSMessageRequest.clientCorrelator)).toEqual([id])
        expect(down.received).toHaveLength(0)
        const accepted = (yield* operatorTimeline(orgId, id)).find((t) => t.to_status === "accepted")
        expect(accepted?.route).toBe("orange")
        expect(yield* metric("sms_provider_fallbacks_total", { from: "telma", to: "orange" })).toBe(before + 1)
        expect(yield* metric("sms_provider_accepted_total", { route: "orange" })).toBeGreaterThanOrEqual(1)
        expect((yield* factsOf(orgId)).get(id)?.credits).toEqual(credits.consumed)
      })
  )

  it.effect("along the chain: telma, then orange without a token, then airtel; each route once", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
      // the provider forgets the tokens it gave and gives no other: every send is a 401, which takes nothing
      fake.expiresIn = null
      for (let n = 1; n <= 5; n++) fake.revoked.add(`tok-${n}`)
      const text = "down the chain"
      const { id, reply } = yield* create(apiKey, { to: "+261341234568", text })
      expect(reply.status, reply.text).toBe(201)
      expect(reply.body.status).toBe("accepted")
      expect(fake.sends.length).toBeLessThanOrEqual(1)
      expect(down.received).toHaveLength(0)
      expect(up.received.filter((r) => r.text === text)).toHaveLength(1)
      const accepted = (yield* operatorTimeline(orgId, id)).find((t) => t.to_status === "accepted")
      expect(accepted?.route).toBe("airtel")
    })
  )

  it.effect("no fallback after an answer that may mean taken: a lost answer leaves it unknown, on orange alone", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { apiKey } = yield* app.newOrg({ credits: 10 })
      fake.onSend = () => "destroy"
      const text = "answer lost"
      const { id, reply } = yield* create(apiKey, { to: "+261321234568", text })
      expect(reply.status, reply.text).toBe(502)
      expect(reply.text).toContain("provider_result_unknown")
      expect(yield* statusOf(apiKey, id)).toBe("unknown")
      expect(fake.sends).toHaveLength(1)
      expect(up.received.filter((r) => r.text === text)).toHaveLength(0)
    })
  )
})
