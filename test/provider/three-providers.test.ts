/**
 * The simulator test numbers (docs/decisions.md#the-provider-simulator) through each provider the
 * service can send through, over its public HTTP API: the in-process simulator
 * (SMS_PROVIDER=simulator), the SMSC simulator over SMPP (docs/operators.md#the-smsc-simulator)
 * and the OneAPI simulator over HTTP (docs/operators.md#the-oneapi-simulator, an entry with
 * `verify_by_correlator`, docs/operators.md#oneapi-routes). The expected table is TestNumbers.ts,
 * written once; each provider is a column run over it: every number sent now, then, once each
 * reached its row's final status, the same answer (status and error code), final status,
 * timeline, credits per message and the same balance and ledger for the organisation.
 *
 * The mechanisms differ and the table does not: 04 and 08 are settled by the in-process
 * simulator's status query, by the SMSC's late answer kept as evidence, and by the OneAPI
 * simulator's answer to the same correlator sent again (409 SVC0005 taken, 400 SVC0001 never
 * taken); 05 is refused outright in-process and throttled until the deadline by both simulators;
 * 09 is asked about (twice at least here) and never settled by any of them.
 */
import { afterAll, expect } from "@effect/vitest"
import { Effect } from "effect"
import { OneApiSim } from "../../simulator/oneapi/OneApiSim.ts"
import type { Smsc } from "../../simulator/smsc/Smsc.ts"
import { Ledger } from "../../src/ledger/Ledger.ts"
import { HandlerServer } from "../support/HandlerServer.ts"
import { create, statusOf } from "../support/Messages.ts"
import { App, backend, type Reply, type TestAppOptions, withApp } from "../support/TestApp.ts"
import { oneApiApp, oneApiRouteTo } from "./oneapi/support.ts"
import { factsOf, type MessageFacts, settled, smppApp } from "./smpp/service.ts"
import { routeTo, startSmsc } from "./smpp/support.ts"
import { rowOf, table } from "./TestNumbers.ts"

/** The submit deadline of both simulators' routes (SMS_SMPP_RESPONSE_TIMEOUT_MS). */
const responseTimeoutMs = 2000
const receiptDelayMs = 200
const slowMs = 300
/** Beyond the deadline: 04's answer, and 08's first one, come too late to be read. */
const lateMs = responseTimeoutMs + 1000
const verifyIntervalMs = 200
const granted = 20

let smsc: Smsc | undefined
let oneapi: OneApiSim | undefined
let bridge: HandlerServer | undefined
afterAll(async () => {
  await smsc?.dispose()
  await oneapi?.dispose()
  await bridge?.close()
})

interface Column {
  readonly provider: string
  readonly options: Effect.Effect<TestAppOptions>
  readonly setup?: Effect.Effect<void, never, App>
  /** What the provider itself saw, checked after the table (the SMS it took per message). */
  readonly tookOnce?: (messages: ReadonlyMap<string, string>) => void
}

const oneApi = oneApiApp(
  "three_oneapi",
  async () => {
    oneapi = await OneApiSim.start({ receiptDelayMs, slowMs, lateMs, receiptRetryMs: 100 })
    bridge = await HandlerServer.start()
    return { route: oneApiRouteTo(oneapi, { verifyByCorrelator: true }), bridge }
  },
  { responseTimeoutMs },
  { verifyIntervalMs }
)

/** The rows whose message a provider takes (answered 201, or verified as taken). */
const taken = new Set(table.filter((r) => r.credits.consumed > 0).map((r) => r.to))

const columns: ReadonlyArray<Column> = [
  {
    provider: "the in-process simulator",
    options: Effect.succeed({
      label: "three_simulator",
      config: {
        schedulerEnabled: true,
        verifyIntervalMs,
        simulatorReceiptDelayMs: receiptDelayMs,
        simulatorSlowMs: slowMs
      }
    })
  },
  {
    provider: "the SMSC simulator (SMPP)",
    options: Effect.flatMap(
      Effect.promise(async () => {
        smsc = await startSmsc({ receiptDelayMs, slowMs, lateMs })
      }),
      () => smppApp("three_smsc", () => [routeTo(smsc!)], { responseTimeoutMs }, { verifyIntervalMs })
    )
  },
  {
    provider: "the OneAPI simulator (HTTP)",
    options: oneApi.options,
    setup: oneApi.setup,
    // one SMS per taken message, whatever the verification sent again under its correlator; none for the others
    tookOnce: (messages) =>
      expect(table.map((r) => [r.to, oneapi!.sent.filter((s) => s.correlator === messages.get(r.to)).length])).toEqual(
        table.map((r) => [r.to, taken.has(r.to) ? 1 : 0])
      )
  }
]

/** The ledger effect of the whole table: what every row consumed, and what the rows still hold. */
const consumed = table.reduce((n, r) => n + r.credits.consumed, 0)
const reserved = table.reduce((n, r) => n + r.credits.reserved, 0)

/**
 * What one message's row observed: its answer (`create` has checked that it names its message, as
 * `id` or, for a failure, `message_id`), its status as the API shows it, then its facts once settled.
 */
const observed = (to: string, reply: Reply, status: string, facts: MessageFacts | undefined) => ({
  to,
  answer: [reply.status, reply.body?.error?.code],
  status,
  final: facts?.status,
  transitions: facts?.transitions,
  credits: facts?.credits
})

for (const column of columns) {
  withApp(column.options, column.setup)(`the test numbers through ${column.provider} (${backend})`, (it) => {
    it.effect("each number's answer, final status, timeline and credits are the table's", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: granted })
        const sent = yield* Effect.all(
          table.map(({ to }) =>
            Effect.map(create(apiKey, { to, text: `now to ${to}` }), ({ id, reply }) => [to, { id, reply }] as const)
          ),
          { concurrency: "unbounded" }
        )
        const messages = new Map(sent)
        // each row in its final status; 09 asked about twice at least and still unknown
        const facts = yield* settled(
          orgId,
          (m) =>
            m.status === rowOf.get(m.to)!.final && (m.status !== "unknown" || (app.calls.queries.get(m.id) ?? 0) >= 2),
          { what: `every row in its final status through ${column.provider}` }
        )
        const rows = yield* Effect.forEach(table, (row) => {
          const { id, reply } = messages.get(row.to)!
          return Effect.map(statusOf(apiKey, id), (status) => observed(row.to, reply, status, facts.get(id)))
        })
        expect(rows).toEqual(
          table.map((row) => ({
            to: row.to,
            answer: [row.answer[0], row.answer[1]],
            status: row.final,
            final: row.final,
            transitions: ["->processing@admission", ...row.tail],
            credits: row.credits
          }))
        )
        // nothing else moved: every message of the organisation is one of the table's
        expect((yield* factsOf(orgId)).size).toBe(table.length)
        const balance = yield* app.call("GET", "/api/sms/v2/balance/", { token: apiKey })
        expect(balance.status, balance.text).toBe(200)
        expect(balance.body).toMatchObject({
          total: granted - consumed,
          reserved,
          available: granted - consumed - reserved
        })
        expect(yield* Effect.flatMap(Ledger, (ledger) => ledger.totals(orgId))).toEqual({
          granted,
          consumed,
          reserved,
          available: granted - consumed - reserved,
          expiredUnreserved: 0
        })
        column.tookOnce?.(new Map([...messages].map(([to, m]) => [to, m.id])))
      })
    )
  })
}
