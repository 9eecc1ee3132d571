/**
 * The whole service against the OneAPI simulator (docs/operators.md#oneapi-routes, an entry with
 * `verify_by_correlator` and an `mps` cap): a token the provider ends while forty sends are under
 * way fails none of them (each one refused for it is sent again once, under one new token, and
 * taken once); a send whose answer the simulator loses is `unknown`, then settled as accepted by
 * its correlator sent again (409 SVC0005, docs/decisions.md#oneapi), and the simulator's journal
 * holds one SMS for it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect } from "@effect/vitest"
import { Effect } from "effect"
import type { Entry } from "../../simulator/oneapi/Book.ts"
import { OneApiSim } from "../../simulator/oneapi/OneApiSim.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { oneApiApp, oneApiRouteTo } from "../provider/oneapi/support.ts"
import { factsOf, settled } from "../provider/smpp/service.ts"
import { HandlerServer } from "../support/HandlerServer.ts"
import { create } from "../support/Messages.ts"
import { App, backend, withApp } from "../support/TestApp.ts"

/** Longer than the first verification takes (SMS_VERIFY_INTERVAL_MS 200 ms): the correlator settles a lost answer, not its receipt. */
const receiptDelayMs = 1500
/** The route's cap: sends under load queue for their turn, each holding the token it took. */
const mps = 10
/**
 * The send request that ends every token: the first of the third second, when every one of the
 * forty holds the old token unless its admission took more than 50 ms.
 */
const expiresAt = 2 * mps + 1
const dataDir = mkdtempSync(join(tmpdir(), "oneapi-service-"))
let sim: OneApiSim | undefined
let bridge: HandlerServer | undefined
afterAll(async () => {
  await sim?.dispose()
  await bridge?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const app = oneApiApp(
  "oneapi_service",
  async () => {
    sim = await OneApiSim.start({ dataDir, receiptDelayMs, receiptRetryMs: 100 })
    bridge = await HandlerServer.start()
    return { route: oneApiRouteTo(sim, { verifyByCorrelator: true, mps }), bridge }
  },
  // long enough for forty sends and those sent again, at `mps`
  { responseTimeoutMs: 15_000 }
)

/** The simulator's journal (docs/operators.md#the-oneapi-simulator): one `taken` entry per SMS it sent. */
const journal = (): ReadonlyArray<Entry> =>
  readFileSync(join(dataDir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Entry)

withApp(app.options, app.setup)(`the service against the OneAPI simulator (${backend})`, (it) => {
  it.effect("a token ended while forty sends are under way: every one is taken once and delivered", () =>
    Effect.gen(function* () {
      const { orgId, apiKey } = yield* (yield* App).newOrg({ credits: 40 })
      const s = sim!
      const tokensBefore = s.tokensIssued
      const requestsBefore = s.requests.length
      // the 21st send to arrive, two seconds after the first, finds every token issued so far
      // expired: by then the sends still waiting for their turn hold the old token
      s.expireTokensAtRequest(expiresAt)
      const recipients = Array.from({ length: 40 }, (_, i) => `+2613410000${String(i).padStart(2, "0")}`)
      const replies = yield* Effect.all(
        recipients.map((to) => create(apiKey, { to, text: "Salama" })),
        { concurrency: "unbounded" }
      )
      expect(replies.map((r) => r.reply.status)).toEqual(recipients.map(() => 201))
      const requests = s.requests.slice(requestsBefore)
      expect(requests.slice(0, expiresAt - 1).map((r) => r.status)).toEqual(Array(expiresAt - 1).fill(201))
      expect(requests[expiresAt - 1]!.status).toBe(401)
      // each send refused for the ended token sent again once, all of them under one new token
      const ids = replies.map((r) => r.id)
      const answers = ids.map((id) => requests.filter((r) => r.correlator === id).map((r) => r.status))
      expect(answers.filter((a) => a.length === 1)).toEqual(answers.filter((a) => a.length === 1).map(() => [201]))
      const refused = answers.filter((a) => a.length !== 1)
      expect(refused).toEqual(refused.map(() => [401, 201]))
      expect(refused.length).toBeGreaterThanOrEqual(2)
      expect(requests).toHaveLength(ids.length + refused.length)
      expect(s.tokensIssued).toBe(tokensBefore + 1)
      expect(ids.map((id) => s.sent.filter((m) => m.correlator === id).length)).toEqual(ids.map(() => 1))
      yield* settled(orgId, (m) => m.status === "delivered", { what: "all forty delivered" })
      expect(yield* Effect.flatMap(Ledger, (l) => l.totals(orgId))).toMatchObject({ consumed: 40, reserved: 0 })
    })
  )

  it.effect("a lost answer is unknown, then settled as accepted by its correlator: one SMS on the journal", () =>
    Effect.gen(function* () {
      const { orgId, apiKey } = yield* (yield* App).newOrg({ credits: 1 })
      const s = sim!
      const to = "+261341234599"
      s.dropNextAnswers(1)
      const { id, reply } = yield* create(apiKey, { to, text: "Salama" })
      expect([reply.status, reply.body.error?.code, reply.body.message_id], reply.text).toEqual([
        502,
        "provider_result_unknown",
        id
      ])
      const facts = yield* settled(orgId, (m) => m.status === "delivered", { what: "verified, then delivered" })
      expect(facts.get(id)).toMatchObject({
        transitions: [
          "->processing@admission",
          "processing>unknown@provider",
          "unknown>accepted@verification",
          "accepted>delivered@receipt"
        ],
        credits: { reserved: 0, consumed: 1, released: 0 },
        // settled by the correlator's answer, before any receipt could be kept as evidence
        evidence: null
      })
      // the lost request, then the same correlator again: 409, nothing sent twice
      expect(s.requests.filter((r) => r.correlator === id).map((r) => r.status)).toEqual([undefined, 409])
      expect(s.sent.filter((m) => m.to === to).map((m) => m.correlator)).toEqual([id])
      const taken = journal().filter((e) => e.kind === "taken" && e.correlator === id)
      expect(taken).toHaveLength(1)
      expect((yield* factsOf(orgId)).size).toBe(1)
    })
  )
})
