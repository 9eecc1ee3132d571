import { randomUUID } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import type { FetchFn } from "../../src/admin/cli/client.ts"
import { run } from "../../src/admin/cli/run.ts"
import { adminToken, backend, makeTestApp } from "../support/TestApp.ts"
import { appFetch, refusingFetch } from "./appFetch.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

const fetchApp = appFetch(app)

/** Runs the CLI against the in-process app with the operator token in the environment. */
const cli = async (argv: ReadonlyArray<string>, options: { env?: Record<string, string>; fetch?: FetchFn } = {}) => {
  let stdout = ""
  let stderr = ""
  const code = await run(argv, {
    env: options.env ?? { SMS_ADMIN_TOKEN: adminToken, SMS_ADMIN_URL: "http://sms.test" },
    fetch: options.fetch ?? fetchApp,
    stdout: (t) => {
      stdout += t
    },
    stderr: (t) => {
      stderr += t
    }
  })
  return { code, stdout, stderr }
}

/** Runs with --json and parses stdout. */
const cliJson = async (argv: ReadonlyArray<string>) => {
  const result = await cli([...argv, "--json"])
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- asserted field by field
  return JSON.parse(result.stdout) as any
}

describe(`sms-admin against the operator API (${backend})`, () => {
  it("creates an organisation, grants credits, issues and revokes a key, sets a sender", async () => {
    const created = await cli(["org", "create", "Acme Corp", "--sender", "ACME"])
    expect(created).toMatchObject({ code: 0, stderr: "" })
    const orgId = /^id {14}(\S+)$/m.exec(created.stdout)?.[1]
    expect(orgId).toBeDefined()
    expect(created.stdout).toBe(
      `id              ${orgId}\nname            Acme Corp\nsms enabled     yes\ndefault sender  ACME\n`
    )

    const createdJson = await cliJson(["org", "create", "Beta"])
    expect(createdJson).toEqual({ id: expect.any(String), name: "Beta", sms_enabled: true, default_sender_name: "INFO" })

    const granted = await cli(["credits", "grant", orgId!, "1000"])
    expect(granted).toMatchObject({ code: 0, stderr: "" })
    expect(granted.stdout).toBe(
      `organization  ${orgId}\ngranted       1000 credits, valid until -\n` +
        "balance       total 1000  reserved 0  available 1000  valid until -\n"
    )
    expect(await cliJson(["credits", "grant", orgId!, "50", "--valid-until", "2999-12-31"])).toEqual({
      balance: { total: 1050, reserved: 0, available: 1050, valid_until: "2999-12-31" }
    })

    const key = await cli(["key", "create", orgId!, "--permissions", "sms.send,balance.read"])
    expect(key).toMatchObject({ code: 0, stderr: "" })
    const apiKey = /^API key: (\S+)$/m.exec(key.stdout)?.[1]
    expect(apiKey).toBeDefined()
    expect(key.stdout).toContain("shown only once")
    expect(key.stdout).toMatch(/^permissions {3}sms\.send, balance\.read$/m)
    expect(key.stdout).toMatch(new RegExp(`^organization  ${orgId}$`, "m"))
    const keyId = /^key id {8}(\S+)$/m.exec(key.stdout)?.[1]
    expect(keyId).toBeDefined()
    const balance = await app.call("GET", "/api/sms/v2/balance/", { token: apiKey! })
    expect(balance.status).toBe(200)

    const keyJson = await cliJson(["key", "create", orgId!, "--all"])
    expect(keyJson).toEqual({
      key_id: expect.any(String),
      api_key: expect.any(String),
      permissions: ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"]
    })

    const shown = await cli(["org", "show", orgId!])
    expect(shown).toEqual({
      code: 0,
      stderr: "",
      stdout: `id              ${orgId}\nname            Acme Corp\nsms enabled     yes\ndefault sender  ACME\n` +
        "balance         total 1050  reserved 0  available 1050  valid until 2999-12-31\n"
    })
    expect(await cliJson(["org", "show", orgId!])).toMatchObject({
      id: orgId,
      name: "Acme Corp",
      sms_enabled: true,
      default_sender_name: "ACME",
      balance: { total: 1050, reserved: 0, available: 1050, valid_until: "2999-12-31" }
    })

    const sender = await cli(["sender", "set", orgId!, "SHOP", "--active", "true"])
    expect(sender).toEqual({ code: 0, stderr: "", stdout: `organization  ${orgId}\nsender        SHOP\nactive        yes\n` })
    expect(await cliJson(["sender", "set", orgId!, "SHOP", "--active", "false"])).toEqual({ name: "SHOP", active: false })

    const updated = await cli(["org", "update", orgId!, "--sms-enabled", "false"])
    expect(updated.code).toBe(0)
    expect(updated.stdout).toMatch(/^sms enabled {5}no$/m)
    expect(await cliJson(["org", "update", orgId!, "--sms-enabled", "true", "--sender", "SHOP"])).toMatchObject({
      sms_enabled: true,
      default_sender_name: "SHOP"
    })

    const revoked = await cli(["key", "revoke", keyId!])
    expect(revoked).toEqual({ code: 0, stderr: "", stdout: `key id   ${keyId}\nrevoked  yes\n` })
    expect(await cliJson(["key", "revoke", keyJson.key_id])).toEqual({ key_id: keyJson.key_id, revoked: true })
    const after = await app.call("GET", "/api/sms/v2/balance/", { token: apiKey! })
    expect(after.status).toBe(401)
  })

  it("prints API errors as `error: <code>: <message>` on stderr and exits 1", async () => {
    const unknown = await cli(["org", "show", randomUUID()])
    expect(unknown.code).toBe(1)
    expect(unknown.stdout).toBe("")
    expect(unknown.stderr).toMatch(/^error: not_found: \S.*\n$/)

    const unknownJson = await cli(["org", "show", randomUUID(), "--json"])
    expect(unknownJson.code).toBe(1)
    expect(JSON.parse(unknownJson.stderr)).toMatchObject({ error: { code: "not_found" } })

    const message = await cli(["message", "show", randomUUID(), randomUUID()])
    expect(message.code).toBe(1)
    expect(message.stderr).toMatch(/^error: not_found: /)
  })

  it("prints the details of a validation error", async () => {
    const { orgId } = await app.newOrg()
    const past = await cli(["credits", "grant", orgId, "10", "--valid-until", "2000-01-01"])
    expect(past.code).toBe(1)
    expect(past.stderr).toMatch(/^error: validation_error: .+\n {2}valid_until: must be today or later \(UTC\)\n$/)

    const badSender = await cli(["sender", "set", orgId, "TOO-LONG-NAME!", "--active", "true"])
    expect(badSender.code).toBe(1)
    expect(badSender.stderr).toMatch(/^error: validation_error: .+\n {2}name: /)
  })

  it("refuses a wrong operator token", async () => {
    const { orgId, apiKey } = await app.newOrg()
    const wrong = await cli(["org", "show", orgId, "--token", apiKey])
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(/^error: invalid_api_key: /)
  })

  it("names the URL when the service cannot be reached, and exits 2", async () => {
    const result = await cli(["org", "show", "o1", "--url", "http://127.0.0.1:9/"], { fetch: refusingFetch, env: { SMS_ADMIN_TOKEN: "t" } })
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr: "error: cannot reach the SMS service at http://127.0.0.1:9/admin/v1/organizations/o1: connect ECONNREFUSED 127.0.0.1:9\n"
    })
  })

  it("exits 64 on usage errors and a missing token, and prints usage for --help or nothing", async () => {
    const missing = await cli(["org", "show", "o1"], { env: {} })
    expect(missing.code).toBe(64)
    expect(missing.stderr).toMatch(/^error: no operator token: pass --token TOKEN or set SMS_ADMIN_TOKEN/)

    const usage = await cli(["credits", "grant", "o1"])
    expect(usage).toMatchObject({ code: 64, stdout: "" })
    expect(usage.stderr).toContain("usage: sms-admin credits grant <org_id> <amount> [--valid-until YYYY-MM-DD]")

    const help = await cli(["--help"], { env: {} })
    expect(help).toMatchObject({ code: 0, stderr: "" })
    expect(help.stdout).toContain("Usage: sms-admin <command>")

    const nothing = await cli([], { env: {} })
    expect(nothing).toMatchObject({ code: 64, stdout: "" })
    expect(nothing.stderr).toBe(help.stdout)
  })
})
