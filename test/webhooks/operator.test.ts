/** The operator's view of webhook endpoints (docs/decisions.md#webhooks): the admin API and `sms-admin webhook list|disable`. */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { runIn } from "../cli/support.ts"
import { expectError } from "../http/helpers.ts"
import { appHttpClient } from "../support/AppHttpClient.ts"
import { adminToken, App, withApp } from "../support/TestApp.ts"
import { createEndpoint, webhookPath, withWebhooks } from "./support.ts"

const url = "http://127.0.0.1:9/hooks"
const env = { SMS_ADMIN_TOKEN: adminToken, SMS_ADMIN_URL: "http://sms.test" }
/** sms-admin run in-process (a program of its own) against the suite's app. */
const cli = (argv: ReadonlyArray<string>) =>
  Effect.flatMap(App, (app) => Effect.promise(() => runIn(appHttpClient(app.handler), argv, env)))

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("webhooks for the operator", { timeout: 120_000 }, () => {
  withApp()((it) => {
    it.effect("lists an organisation's endpoints without secrets and disables one", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        const e = yield* createEndpoint(apiKey, { url, events: ["message.delivered"] })
        const list = yield* app.admin("GET", `/organizations/${orgId}/webhooks`)
        expect(list.status).toBe(200)
        expect(list.body).toEqual({
          results: [
            {
              id: e.id,
              url,
              events: ["message.delivered"],
              description: null,
              enabled: true,
              created_at: expect.any(String),
              // loopback addresses are allowed here (the simulator's default)
              url_refused: null
            }
          ],
          next_cursor: null
        })
        expect(list.text).not.toContain(e.secret.slice(6))

        const disabled = yield* app.admin("PATCH", `/organizations/${orgId}/webhooks/${e.id}`, { enabled: false })
        expect(disabled.status, disabled.text).toBe(200)
        expect(disabled.body.enabled).toBe(false)
        expect((yield* app.call("GET", webhookPath(e.id), { token: apiKey })).body.enabled).toBe(false)

        const other = yield* app.newOrg({ permissions: withWebhooks })
        expectError(
          yield* app.admin("PATCH", `/organizations/${other.orgId}/webhooks/${e.id}`, { enabled: false }),
          404,
          "not_found"
        )
        expectError(
          yield* app.admin("GET", `/organizations/00000000-0000-4000-8000-000000000000/webhooks`),
          404,
          "not_found"
        )
      })
    )

    it.effect("sms-admin webhook list and disable", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ permissions: withWebhooks })
        const e = yield* createEndpoint(apiKey, { url })
        const listed = yield* cli(["webhook", "list", orgId])
        expect(listed.code, listed.stderr).toBe(0)
        expect(listed.stdout).toBe(`ID${" ".repeat(36)}ENABLED  EVENTS  URL\n${e.id}  yes      10      ${url}\n`)
        const off = yield* cli(["webhook", "disable", orgId, e.id])
        expect(off.code, off.stderr).toBe(0)
        expect(off.stdout).toContain(`${e.id}  no`)
        expect((yield* app.call("GET", webhookPath(e.id), { token: apiKey })).body.enabled).toBe(false)
      })
    )
  })
})
