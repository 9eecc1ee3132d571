/**
 * sms-admin end to end against the in-process app: every command, human and --json output, exit
 * statuses, the environment. The commands call the operator API through the typed client of
 * AdminApi, so a renamed admin route, parameter or field breaks the build of
 * src/admin/cli/Commands.ts (and `npx tsc -p .`) by construction; no test needs to run for that.
 */
import { randomUUID } from "node:crypto"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { appHttpClient } from "../support/AppHttpClient.ts"
import { adminToken, App, backend, withApp } from "../support/TestApp.ts"
import { runIn } from "./support.ts"

const env = { SMS_ADMIN_TOKEN: adminToken, SMS_ADMIN_URL: "http://sms.test" }

/** Runs sms-admin (in-process, a program of its own) against the app with the operator token and URL in the environment. */
const cli = (argv: ReadonlyArray<string>, options: { readonly env?: Record<string, string> } = {}) =>
  Effect.flatMap(App, (app) => Effect.promise(() => runIn(appHttpClient(app.handler), argv, options.env ?? env)))

/** Runs with --json, expects success and parses stdout. */
const cliJson = (argv: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const result = yield* cli([...argv, "--json"])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    // biome-ignore lint/suspicious/noExplicitAny: asserted field by field
    return JSON.parse(result.stdout) as any
  })

/** A fetch that never connects, as when nothing listens at the URL. */
const refused = appHttpClient(async () => {
  throw new TypeError("fetch failed", {
    cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" })
  })
})

withApp()(`sms-admin against the operator API (${backend})`, (it) => {
  it.effect("creates an organisation, grants credits, issues and revokes a key, sets a sender", () =>
    Effect.gen(function* () {
      const app = yield* App
      const created = yield* cli(["org", "create", "Acme Corp", "--sender", "ACME"])
      expect(created).toMatchObject({ code: 0, stderr: "" })
      const orgId = /^id {14}(\S+)$/m.exec(created.stdout)?.[1]
      expect(orgId).toBeDefined()
      expect(created.stdout).toBe(
        `id              ${orgId}\nname            Acme Corp\nsms enabled     yes\ndefault sender  ACME\n` +
          "retention       the service's default\n"
      )

      expect(yield* cliJson(["org", "create", "Beta"])).toEqual({
        id: expect.any(String),
        name: "Beta",
        sms_enabled: true,
        default_sender_name: "INFO",
        retention_days: null
      })

      const granted = yield* cli(["credits", "grant", orgId!, "1000"])
      expect(granted).toEqual({
        code: 0,
        stderr: "",
        stdout:
          `organisation  ${orgId}\ngranted       1000 credits, valid until -\n` +
          "balance       total 1000  reserved 0  available 1000  valid until -\n"
      })
      expect(yield* cliJson(["credits", "grant", orgId!, "50", "--valid-until", "2999-12-31"])).toEqual({
        balance: { total: 1050, reserved: 0, available: 1050, valid_until: "2999-12-31" }
      })

      const key = yield* cli(["key", "create", orgId!, "--permissions", "sms.send,balance.read"])
      expect(key).toMatchObject({ code: 0, stderr: "" })
      const apiKey = /^API key: (\S+)$/m.exec(key.stdout)?.[1]
      const keyId = /^key id {8}(\S+)$/m.exec(key.stdout)?.[1]
      expect(key.stdout).toContain("shown only once")
      expect(key.stdout).toMatch(/^permissions {3}sms\.send, balance\.read$/m)
      expect(key.stdout).toMatch(new RegExp(`^organisation  ${orgId}$`, "m"))
      expect((yield* app.call("GET", "/api/sms/v2/balance/", { token: apiKey! })).status).toBe(200)

      const keyJson = yield* cliJson(["key", "create", orgId!, "--all"])
      expect(keyJson).toEqual({
        key_id: expect.any(String),
        api_key: expect.any(String),
        permissions: [
          "sms.send",
          "sms.schedule",
          "delivery.read",
          "balance.read",
          "contacts.manage",
          "webhooks.manage",
          "inbound.read"
        ]
      })

      expect(yield* cli(["org", "show", orgId!])).toEqual({
        code: 0,
        stderr: "",
        stdout:
          `id              ${orgId}\nname            Acme Corp\nsms enabled     yes\ndefault sender  ACME\n` +
          "retention       the service's default\n" +
          "balance         total 1050  reserved 0  available 1050  valid until 2999-12-31\n"
      })
      expect(yield* cliJson(["org", "show", orgId!])).toEqual({
        id: orgId,
        name: "Acme Corp",
        sms_enabled: true,
        default_sender_name: "ACME",
        retention_days: null,
        balance: { total: 1050, reserved: 0, available: 1050, valid_until: "2999-12-31" }
      })

      expect(yield* cli(["sender", "set", orgId!, "SHOP", "--active", "true"])).toEqual({
        code: 0,
        stderr: "",
        stdout: `organisation  ${orgId}\nsender        SHOP\nactive        yes\n`
      })
      expect(yield* cliJson(["sender", "set", orgId!, "SHOP", "--active", "false"])).toEqual({
        name: "SHOP",
        active: false
      })

      const updated = yield* cli(["org", "update", orgId!, "--sms-enabled", "false"])
      expect(updated.code).toBe(0)
      expect(updated.stdout).toMatch(/^sms enabled {5}no$/m)
      expect(yield* cliJson(["org", "update", orgId!, "--sms-enabled", "true", "--sender", "SHOP"])).toMatchObject({
        sms_enabled: true,
        default_sender_name: "SHOP"
      })
      const kept = yield* cli(["org", "update", orgId!, "--retention-days", "30"])
      expect(kept.code, kept.stderr).toBe(0)
      expect(kept.stdout).toMatch(/^retention {7}30 days$/m)
      expect(yield* cliJson(["org", "update", orgId!, "--retention-days", "default"])).toMatchObject({
        retention_days: null
      })

      expect(yield* cli(["key", "revoke", keyId!])).toEqual({
        code: 0,
        stderr: "",
        stdout: `key id   ${keyId}\nrevoked  yes\n`
      })
      expect(yield* cliJson(["key", "revoke", keyJson.key_id])).toEqual({ key_id: keyJson.key_id, revoked: true })
      expect((yield* app.call("GET", "/api/sms/v2/balance/", { token: apiKey! })).status).toBe(401)
    })
  )

  it.effect("lists organisations a page at a time, newest first", () =>
    Effect.gen(function* () {
      const older = (yield* cliJson(["org", "create", "Listed older"])).id
      const newer = (yield* cliJson(["org", "create", "Listed newer"])).id

      const page = yield* cliJson(["org", "list", "--limit", "100"])
      const ids: Array<string> = page.results.map((o: { id: string }) => o.id)
      expect(ids).toContain(older)
      expect(ids).toContain(newer)
      expect(page.results.find((o: { id: string }) => o.id === newer)).toEqual({
        id: newer,
        name: "Listed newer",
        sms_enabled: true,
        default_sender_name: "INFO",
        retention_days: null,
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/)
      })

      const human = yield* cli(["org", "list"])
      expect(human.code).toBe(0)
      expect(human.stdout).toMatch(/^ID {36}NAME +SMS +DEFAULT SENDER +CREATED\n/)
      expect(human.stdout).toMatch(new RegExp(`^${newer}  Listed newer +yes  INFO +\\S+Z$`, "m"))

      // one per page: the human output names the next page's command, which continues the list
      const first = yield* cli(["org", "list", "--limit", "1"])
      const cursor = /^more: sms-admin org list --cursor (\S+)$/m.exec(first.stdout)?.[1]
      expect(cursor).toBeDefined()
      const second = yield* cliJson(["org", "list", "--limit", "1", "--cursor", cursor!])
      expect(second.results).toHaveLength(1)
      expect(first.stdout).not.toContain(second.results[0].id)
    })
  )

  it.effect("lists an organisation's keys (never a secret) and senders", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, keyId, apiKey } = yield* app.newOrg({ permissions: ["sms.send"] })
      expect((yield* cli(["key", "revoke", keyId])).code).toBe(0)
      const second = yield* cliJson(["key", "create", orgId, "--permissions", "delivery.read"])

      const keys = yield* cli(["key", "list", orgId])
      expect(keys.code).toBe(0)
      const [header, ...rows] = keys.stdout.trimEnd().split("\n")
      expect(header).toMatch(/^KEY ID +PERMISSIONS +CREATED +REVOKED$/)
      expect(rows).toHaveLength(2)
      expect(rows[0]).toMatch(new RegExp(`^${keyId}  sms\\.send +\\S+Z  \\S+Z$`))
      expect(rows[1]).toMatch(new RegExp(`^${second.key_id}  delivery\\.read +\\S+Z  -$`))
      for (const secret of [apiKey, second.api_key]) expect(keys.stdout).not.toContain(secret.split(".")[1])
      expect(
        (yield* cliJson(["key", "list", orgId])).results.map((k: { key_id: string; revoked_at: string | null }) => [
          k.key_id,
          k.revoked_at === null
        ])
      ).toEqual([
        [keyId, false],
        [second.key_id, true]
      ])

      expect((yield* cli(["sender", "set", orgId, "PROMO", "--active", "false"])).code).toBe(0)
      expect(yield* cli(["sender", "list", orgId])).toEqual({
        code: 0,
        stderr: "",
        stdout: "NAME   ACTIVE\nINFO   yes\nPROMO  no\n"
      })
      expect(yield* cliJson(["sender", "list", orgId])).toEqual({
        results: [
          { name: "INFO", active: true },
          { name: "PROMO", active: false }
        ]
      })

      const empty = yield* cli(["key", "list", (yield* cliJson(["org", "create", "No keys"])).id])
      expect(empty.stdout).toBe("KEY ID  PERMISSIONS  CREATED  REVOKED\n(none)\n")
    })
  )

  it.effect("shows a message by its id alone, with its organisation and timeline, and erases it", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
      const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
        token: apiKey,
        headers: { "idempotency-key": `cli-${randomUUID()}` },
        body: { to: "+261340000003", text: "Rejected by the provider" }
      })
      expect(sent.status, sent.text).toBe(502)
      const id: string = sent.body.message_id

      const shown = yield* cli(["message", "show", id])
      expect(shown).toMatchObject({ code: 0, stderr: "" })
      expect(shown.stdout).toMatch(
        new RegExp(
          `^organisation   ${orgId}\nid             ${id}\nto             \\+261340000003\nsender name    INFO\nstatus         failed\n` +
            "segments       1\nsend at        -\ndelivery time  -\n\ntimeline\n" +
            "  AT +SOURCE +CHANGE\n  \\S+Z  admission  \\(new\\) -> processing\n  \\S+Z  provider   processing -> failed\n$"
        )
      )
      const json = yield* cliJson(["message", "show", id])
      expect(json).toEqual((yield* app.admin("GET", `/messages/${id}`)).body)
      expect(json).toMatchObject({ id, org_id: orgId, status: "failed" })

      const erased = yield* cli(["message", "erase", orgId, id])
      expect(erased.code).toBe(0)
      expect(erased.stdout).toMatch(/^to {13}\(erased\)\nsender name {4}\(erased\)$/m)
      expect((yield* cliJson(["message", "show", id])).to).toBe("")
    })
  )

  it.effect("asks again about an unknown message, and refuses a message that is not unknown", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg({ credits: 5 })
      const send = (to: string) =>
        Effect.gen(function* () {
          const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
            token: apiKey,
            headers: { "idempotency-key": `cli-${randomUUID()}` },
            body: { to, text: "Verify me" }
          })
          expect(sent.status, sent.text).toBe(502)
          return sent.body.message_id as string
        })
      const unknown = yield* send("+261340000009")
      const asked = yield* cli(["message", "verify", orgId, unknown])
      expect(asked).toMatchObject({ code: 0, stderr: "" })
      expect(asked.stdout).toMatch(
        new RegExp(
          `^id             ${unknown}\nto             \\+261340000009\nsender name    INFO\nstatus         unknown\n` +
            "segments       1\nsend at        -\ndelivery time  -\n\ntimeline\n" +
            "  AT +SOURCE +CHANGE\n  \\S+Z  admission  \\(new\\) -> processing\n  \\S+Z  provider   processing -> unknown\n$"
        )
      )
      expect(yield* cliJson(["message", "verify", orgId, unknown])).toMatchObject({ id: unknown, status: "unknown" })

      const failed = yield* send("+261340000003")
      const refused = yield* cli(["message", "verify", orgId, failed])
      expect(refused).toMatchObject({ code: 1, stdout: "" })
      expect(refused.stderr).toMatch(new RegExp(`^error: message_not_unknown: .*failed\n  message_id: ${failed}\n$`))
    })
  )

  it.effect(
    "prints API errors as `error: <code>: <message>` (or the error body with --json) on stderr and exits 1",
    () =>
      Effect.gen(function* () {
        const app = yield* App
        const unknown = yield* cli(["org", "show", randomUUID()])
        expect(unknown).toMatchObject({ code: 1, stdout: "" })
        expect(unknown.stderr).toMatch(/^error: not_found: \S.*\n$/)

        const unknownJson = yield* cli(["org", "show", randomUUID(), "--json"])
        expect(unknownJson.code).toBe(1)
        expect(JSON.parse(unknownJson.stderr)).toEqual({ error: { code: "not_found", message: expect.any(String) } })

        expect((yield* cli(["message", "show", randomUUID()])).stderr).toMatch(/^error: not_found: /)
        expect((yield* cli(["key", "list", randomUUID()])).code).toBe(1)
        expect((yield* cli(["org", "list", "--cursor", "garbage"])).stderr).toMatch(/^error: invalid_cursor: /)

        const { orgId } = yield* app.newOrg()
        const past = yield* cli(["credits", "grant", orgId, "10", "--valid-until", "2000-01-01"])
        expect(past.code).toBe(1)
        expect(past.stderr).toMatch(/^error: validation_error: .+\n {2}valid_until: must be today or later \(UTC\)\n$/)
        const badSender = yield* cli(["sender", "set", orgId, "TOO-LONG-NAME!", "--active", "true"])
        expect(badSender.code).toBe(1)
        expect(badSender.stderr).toMatch(/^error: validation_error: .+\n {2}name: /)
      })
  )

  it.effect("refuses a wrong operator token with exit 1", () =>
    Effect.gen(function* () {
      const app = yield* App
      const { orgId, apiKey } = yield* app.newOrg()
      const wrong = yield* cli(["org", "show", orgId, "--token", apiKey])
      expect(wrong.code).toBe(1)
      expect(wrong.stderr).toMatch(/^error: invalid_api_key: /)
    })
  )

  it.effect("names the URL when the service cannot be reached, and exits 2", () =>
    Effect.gen(function* () {
      const result = yield* Effect.promise(() =>
        runIn(refused, ["org", "show", "o1", "--url", "http://127.0.0.1:9/"], { SMS_ADMIN_TOKEN: "t" })
      )
      expect(result).toEqual({
        code: 2,
        stdout: "",
        stderr:
          "error: cannot reach the SMS service at http://127.0.0.1:9/admin/v1/organizations/o1: connect ECONNREFUSED 127.0.0.1:9\n"
      })
    })
  )

  it.effect("takes the URL and token from SMS_ADMIN_URL and SMS_ADMIN_TOKEN, the flags winning over them", () =>
    Effect.gen(function* () {
      const app = yield* App
      const fromEnv = yield* Effect.promise(() =>
        runIn(refused, ["org", "show", "o1"], { SMS_ADMIN_TOKEN: "t", SMS_ADMIN_URL: "https://sms.example/base/" })
      )
      expect(fromEnv.stderr).toMatch(/at https:\/\/sms\.example\/base\/admin\/v1\/organizations\/o1: /)
      const fromFlag = yield* Effect.promise(() =>
        runIn(refused, ["org", "show", "o1", "--url", "http://other:1234"], {
          SMS_ADMIN_TOKEN: "t",
          SMS_ADMIN_URL: "http://x"
        })
      )
      expect(fromFlag.stderr).toMatch(/at http:\/\/other:1234\/admin\/v1\/organizations\/o1: /)
      const byDefault = yield* Effect.promise(() => runIn(refused, ["org", "show", "o1"], { SMS_ADMIN_TOKEN: "t" }))
      expect(byDefault.stderr).toMatch(/at http:\/\/127\.0\.0\.1:8080\/admin\/v1\/organizations\/o1: /)

      const { orgId } = yield* app.newOrg()
      expect(
        (yield* cli(["org", "show", orgId, "--token", adminToken], { env: { SMS_ADMIN_URL: "http://sms.test" } })).code
      ).toBe(0)
      expect((yield* cli(["org", "show", orgId, "--token", "wrong-token-123456789"])).code).toBe(1)
    })
  )
})
