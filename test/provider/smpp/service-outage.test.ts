/**
 * Receipts that arrive while the database cannot store them (docs/decisions.md#smpp): the adapter answers
 * each 0x64 ESME_RX_T_APPN, the SMSC sends it again (with backoff, after `receiptRetryMs` here
 * rather than 5 s), and once the database is back every receipt is stored once and applied: no
 * message stays `accepted`, none is lost.
 *
 * On PostgreSQL the database really goes away for the service: its connections go through a TCP
 * proxy that is cut (the shared server itself is never touched), and `/ready` says so meanwhile.
 * On either database, the inbox alone can be made to fail: a trigger refuses every insert into
 * `provider_receipts` with SQLSTATE 08006 (connection failure), as an outage would.
 */
import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { eventuallyEffect } from "../../support/Eventually.ts"
import { create } from "../../support/Messages.ts"
import { createScratchDatabase } from "../../support/ScratchDatabase.ts"
import { TcpProxy } from "../../support/TcpProxy.ts"
import { App, type AppServices, backend, withApp } from "../../support/TestApp.ts"
import { credits, settled, smppApp, smppConfig } from "./service.ts"
import { routeTo, startSmsc } from "./support.ts"

const databaseUrl = process.env.DATABASE_URL
const ESME_RX_T_APPN = 0x64
const messages = 8

let smsc: Smsc
beforeAll(async () => {
  // receipts come two seconds after the answers: after the outage has begun
  smsc = await startSmsc({ receiptDelayMs: 2000, receiptRetryMs: 200 })
})
afterAll(() => smsc?.dispose())

/**
 * Sends `messages` messages, takes the database away from the inbox (`outage.begin`) before their
 * receipts come, keeps it away until every receipt was refused twice, gives it back, and expects
 * every message delivered by its receipt, stored once.
 */
const receiptsAcrossAnOutage = (
  label: string,
  outage: {
    readonly begin: () => Effect.Effect<void, unknown, App | AppServices>
    readonly end: () => Effect.Effect<void, unknown, App | AppServices>
  }
) =>
  Effect.gen(function* () {
    const { orgId, apiKey } = yield* (yield* App).newOrg({ credits: messages })
    const creations = Array.from({ length: messages }, (_, i) => ({
      to: `+26133400${String(i).padStart(4, "0")}`,
      text: `${label} ${i}`
    }))
    const sent = yield* Effect.all(
      creations.map((c) => create(apiKey, c)),
      { concurrency: "unbounded" }
    )
    for (const { reply } of sent) expect(reply.status, reply.text).toBe(201)
    // the SMSC's ids of these messages, as its receipts carry them
    const ids = new Set(
      creations.map((c) => String(smsc.messages.find((m) => m.to === c.to && m.text === c.text)!.ids[0]))
    )
    const answersBefore = smsc.receiptAnswers.length
    const answers = () => smsc.receiptAnswers.slice(answersBefore).filter((a) => ids.has(a.id))
    yield* outage.begin()

    // each receipt refused, sent again and refused again: the SMSC keeps them while we cannot
    yield* eventuallyEffect(
      Effect.sync(answers),
      (a) => [...ids].every((id) => a.filter((x) => x.id === id && x.status === ESME_RX_T_APPN).length >= 2),
      {
        what: "every receipt refused twice",
        intervalMs: 20
      }
    )
    expect(answers().filter((a) => a.status !== ESME_RX_T_APPN)).toEqual([])
    yield* outage.end()

    const facts = yield* settled(orgId, (m) => m.status === "delivered", {
      what: "every message delivered after the outage"
    })
    expect(facts.size).toBe(messages)
    for (const m of facts.values()) {
      // applied by the statement that received it: no receipt row is kept
      expect(m.receipts, m.to).toEqual([])
      expect(m.transitions, m.to).toEqual([
        "->processing@admission",
        "processing>accepted@provider",
        "accepted>delivered@receipt"
      ])
      expect(m.credits, m.to).toEqual(credits.consumed)
    }
    // every receipt was finally acknowledged, once stored
    for (const id of ids)
      expect(
        answers()
          .filter((a) => a.id === id)
          .at(-1)?.status,
        id
      ).toBe(0)
  })

withApp(smppApp("smpp_inbox_down", () => [routeTo(smsc)]))(
  `receipts while the inbox cannot store them (${backend})`,
  (it) => {
    const sql = (statements: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        for (const statement of statements) yield* sql.unsafe(statement)
      })

    it.effect("answers 0x64 while the inbox fails, and applies every receipt once it stores them again", () =>
      Effect.gen(function* () {
        yield* receiptsAcrossAnOutage("inbox down", {
          begin: () =>
            sql([
              `CREATE FUNCTION refuse_receipts() RETURNS trigger LANGUAGE plpgsql AS
              $$ BEGIN RAISE EXCEPTION 'the inbox is down (test)' USING ERRCODE = '08006'; END $$`,
              "CREATE TRIGGER refuse_receipts BEFORE INSERT ON provider_receipts FOR EACH STATEMENT EXECUTE FUNCTION refuse_receipts()"
            ]),
          end: () => sql(["DROP TRIGGER refuse_receipts ON provider_receipts", "DROP FUNCTION refuse_receipts()"])
        })
      })
    )
  }
)

describe.skipIf(!databaseUrl)(
  "receipts while PostgreSQL is unreachable (needs DATABASE_URL: the service reaches its own database through a TCP proxy that is cut)",
  () => {
    let proxy: TcpProxy
    let scratch: Awaited<ReturnType<typeof createScratchDatabase>>
    let url: URL
    beforeAll(async () => {
      scratch = await createScratchDatabase("smpp_outage")
      url = new URL(scratch.url)
      proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) })
      url.hostname = "127.0.0.1"
      url.port = String(proxy.port)
    })
    afterAll(async () => {
      await proxy?.close()
      await scratch?.drop()
    })

    withApp(
      Effect.sync(() => ({ config: smppConfig([routeTo(smsc)], {}, { databaseUrl: Redacted.make(url.toString()) }) }))
    )((it) => {
      it.effect(
        "answers 0x64 while the database is away, /ready says so, and every receipt is applied once it is back",
        () =>
          Effect.gen(function* () {
            const app = yield* App
            yield* receiptsAcrossAnOutage("database away", {
              begin: () =>
                Effect.gen(function* () {
                  proxy.cut()
                  const ready = yield* app.call("GET", "/ready")
                  expect({
                    status: ready.status,
                    retryAfter: ready.headers.get("retry-after"),
                    body: ready.body
                  }).toEqual({
                    status: 503,
                    retryAfter: "2",
                    body: {
                      error: {
                        code: "service_unavailable",
                        message: "The database is not reachable",
                        details: [
                          { field: "database", message: "not reachable" },
                          { field: "routes.smsc", message: `bound: bound to 127.0.0.1:${smsc.port} as sim` }
                        ]
                      }
                    }
                  })
                }),
              end: () =>
                Effect.gen(function* () {
                  proxy.restore()
                  const ready = yield* eventuallyEffect(app.call("GET", "/ready"), (r) => r.status === 200, {
                    what: "/ready after the outage"
                  })
                  expect(ready.body).toEqual({
                    status: "ready",
                    routes: [
                      {
                        route: "smsc",
                        connected: true,
                        detail: `bound to 127.0.0.1:${smsc.port} as sim`,
                        slot: { held: 0, of: 1 }
                      }
                    ]
                  })
                })
            })
          })
      )
    })
  }
)
