/**
 * Two SMSCs behind one service, routed by number prefix through SMS_PROVIDERS_FILE (docs/decisions.md#smpp):
 * +26134… goes to one simulator, +26133… to the other, each through its own bind, and receipts
 * come back from each; a number no entry serves fails before submission (503 with message_id,
 * credits released). `/ready` shows every route's state: 200 while one route is bound, 503 with
 * Retry-After and each route's state in `error.details` once every bind is refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { decodeEnv } from "../../support/ConfigEnv.ts"
import { eventuallyEffect } from "../../support/Eventually.ts"
import { create } from "../../support/Messages.ts"
import type { RouteSettings } from "../../../src/config/SmppSettings.ts"
import { App, backend, withApp } from "../../support/TestApp.ts"
import { credits, settled, smppApp, submitsAt } from "./service.ts"
import { startSmsc } from "./support.ts"

let telma: Smsc
let airtel: Smsc
let routes: ReadonlyArray<RouteSettings>
const temp = mkdtempSync(join(tmpdir(), "sms-routing-"))

beforeAll(async () => {
  telma = await startSmsc()
  airtel = await startSmsc()
  const file = join(temp, "providers.json")
  writeFileSync(
    file,
    JSON.stringify([
      { name: "telma", smpp_url: telma.url(), prefixes: ["+26134", "+26138"] },
      { name: "airtel", smpp_url: airtel.url(), prefixes: ["+26133"], window: 5 }
    ])
  )
  const decoded = decodeEnv({ SMS_PROVIDER: "smpp", SMS_PROVIDERS_FILE: file })
  if (!decoded.ok) throw new Error(decoded.errors.join("\n"))
  routes = decoded.config.smpp!.routes
})
afterAll(async () => {
  await telma?.dispose()
  await airtel?.dispose()
  rmSync(temp, { recursive: true, force: true })
})

const ready = () => Effect.flatMap(App, (app) => app.call("GET", "/ready"))
const bound = (smsc: Smsc) => `bound to 127.0.0.1:${smsc.port} as sim`

// the file's routes, with the tests' short timings
withApp(smppApp("smpp_routing", () => routes))(`routing to two SMSCs by prefix (${backend})`, (it) => {
  it.effect(
    "sends each number through the SMSC of its prefix, and fails a number no entry serves before submission",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const toTelma = yield* create(apiKey, { to: "+261341234567", text: "via telma" })
        const toTelma38 = yield* create(apiKey, { to: "+261381234567", text: "via telma too" })
        const toAirtel = yield* create(apiKey, { to: "+261331234567", text: "via airtel" })
        const unserved = yield* create(apiKey, { to: "+261321234567", text: "via nobody" })
        for (const { reply } of [toTelma, toTelma38, toAirtel]) expect(reply.status, reply.text).toBe(201)
        expect({
          status: unserved.reply.status,
          code: unserved.reply.body.error?.code,
          id: unserved.reply.body.message_id
        }).toEqual({ status: 503, code: "dispatch_unavailable", id: unserved.id })

        const facts = yield* settled(orgId, (m) => m.status === "delivered" || m.status === "failed")
        const refs = yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{
            id: string
            ref: string | null
          }>`SELECT id::text AS id, provider_message_id AS ref FROM messages
          WHERE organisation_id = ${orgId}`
          return new Map(rows.map((r) => [r.id, r.ref]))
        })
        expect(
          [toTelma, toTelma38, toAirtel].map(({ id }) => ({ status: facts.get(id)!.status, ref: refs.get(id) }))
        ).toEqual([
          { status: "delivered", ref: `telma:${telma.messages.find((m) => m.text === "via telma")!.ids[0]}` },
          { status: "delivered", ref: `telma:${telma.messages.find((m) => m.text === "via telma too")!.ids[0]}` },
          { status: "delivered", ref: `airtel:${airtel.messages.find((m) => m.text === "via airtel")!.ids[0]}` }
        ])
        // each message went to its own SMSC only, once
        expect(
          [telma, airtel].map((smsc) => [
            submitsAt(smsc, "+261341234567", "via telma"),
            submitsAt(smsc, "+261381234567", "via telma too"),
            submitsAt(smsc, "+261331234567", "via airtel")
          ])
        ).toEqual([
          [1, 1, 0],
          [0, 0, 1]
        ])
        // the unserved number: failed before anything was written, its credits released
        expect(facts.get(unserved.id)).toMatchObject({
          status: "failed",
          transitions: ["->processing@admission", "processing>failed@provider"],
          credits: credits.released
        })
        expect([...telma.received, ...airtel.received].filter((r) => r.to === "+261321234567")).toEqual([])
      })
  )

  it.effect(
    "/ready: 200 with both routes' states; 200 while one is bound; 503 with every route's state once every bind is refused",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        expect(yield* ready()).toMatchObject({
          status: 200,
          body: {
            status: "ready",
            routes: [
              { route: "telma", connected: true, detail: bound(telma), slot: { held: 0, of: 1 } },
              { route: "airtel", connected: true, detail: bound(airtel), slot: { held: 0, of: 1 } }
            ]
          }
        })

        airtel.refuseBinds = true
        airtel.dropConnections()
        const refused = (smsc: Smsc) =>
          new RegExp(`^bind refused by 127\\.0\\.0\\.1:${smsc.port}: 0x0d ESME_RBINDFAIL; retrying in [0-9.]+ s$`)
        const oneBound = yield* eventuallyEffect(
          ready(),
          (r) => r.body.routes?.[1]?.detail.startsWith("bind refused"),
          { what: "airtel refused" }
        )
        expect({ status: oneBound.status, routes: oneBound.body.routes }).toEqual({
          status: 200,
          routes: [
            { route: "telma", connected: true, detail: bound(telma), slot: { held: 0, of: 1 } },
            {
              route: "airtel",
              connected: false,
              detail: expect.stringMatching(refused(airtel)),
              slot: { held: 0, of: 1 }
            }
          ]
        })
        // a send to the unbound route: nothing written, 503, credits released
        const { apiKey } = yield* app.newOrg({ credits: 1 })
        const meanwhile = yield* create(apiKey, { to: "+261331234568", text: "airtel is down" })
        expect({ status: meanwhile.reply.status, code: meanwhile.reply.body.error?.code }).toEqual({
          status: 503,
          code: "dispatch_unavailable"
        })
        expect(airtel.received.filter((r) => r.text === "airtel is down")).toEqual([])

        telma.refuseBinds = true
        telma.dropConnections()
        // between two attempts a route reads "connecting to …": wait for both refusals to show
        const none = yield* eventuallyEffect(
          ready(),
          (r) =>
            r.status === 503 &&
            r.body.error.details.slice(1).every((d: { message: string }) => d.message.includes("bind refused")),
          {
            what: "no route bound, both refused"
          }
        )
        expect({ retryAfter: none.headers.get("retry-after"), body: none.body }).toEqual({
          retryAfter: "2",
          body: {
            error: {
              code: "service_unavailable",
              message: "No provider route is bound",
              details: [
                { field: "database", message: "answers" },
                {
                  field: "routes.telma",
                  message: expect.stringMatching(/^not bound: bind refused by .*: 0x0d ESME_RBINDFAIL; retrying in /)
                },
                {
                  field: "routes.airtel",
                  message: expect.stringMatching(/^not bound: bind refused by .*: 0x0d ESME_RBINDFAIL; retrying in /)
                }
              ]
            }
          }
        })

        telma.refuseBinds = false
        airtel.refuseBinds = false
        const back = yield* eventuallyEffect(
          ready(),
          (r) => r.status === 200 && r.body.routes.every((route: { connected: boolean }) => route.connected),
          {
            what: "both bound again"
          }
        )
        expect(back.body.routes.map((r: { route: string }) => r.route)).toEqual(["telma", "airtel"])
      })
  )
})
