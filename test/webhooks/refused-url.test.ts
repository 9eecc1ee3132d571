/**
 * An endpoint registered while the address rules allowed its loopback URL (the simulator's
 * default, SMS_WEBHOOK_ALLOW_PRIVATE=true), after a restart that forbids it (as a start with
 * SMS_PROVIDER=smpp does): the start logs one WARN naming the endpoint and its organisation (never
 * its secret, path or query), the operator's list says why its URL is refused, and its deliveries
 * say so in `last_error` instead of waiting silently.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { refusedByAddressRules } from "../../src/webhooks/Addresses.ts"
import { eventually } from "../support/Eventually.ts"
import { servingLine, type Started, startService } from "../support/ServiceProcess.ts"
import { organisationFactory, remoteCaller } from "../support/TestApp.ts"

const temp = mkdtempSync(join(tmpdir(), "sms-refused-url-"))
const adminToken = "refused-url-operator-token-0123"
const started: Array<Started> = []
afterAll(async () => {
  for (const s of started) {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL")
    await s.exited
  }
  rmSync(temp, { recursive: true, force: true })
})

const start = async (env: Record<string, string>) => {
  const service = await startService({
    SMS_DATA_DIR: join(temp, "data"),
    SMS_ADMIN_TOKEN: adminToken,
    LOG_LEVEL: "warn",
    ...env
  })
  started.push(service)
  await service.waitFor(servingLine)
  const call = remoteCaller(`http://127.0.0.1:${service.port}`)
  const admin = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })
  return { service, call, admin }
}

const refusalLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line.includes("refused by the address rules"))
    .map((line) => JSON.parse(line) as { level: string; annotations: Record<string, string> })

describe("a loopback webhook URL after a restart that forbids private addresses", () => {
  it("is logged once at start, shown to the operator and named in the deliveries' last_error", async () => {
    const first = await start({})
    const { orgId, apiKey } = await organisationFactory(first.admin)({
      permissions: ["delivery.read", "webhooks.manage"]
    })
    const url = "http://127.0.0.1:9/hooks/receiver-path?token=query-secret"
    const created = await first.call("POST", "/api/sms/v2/webhooks/", {
      token: apiKey,
      headers: { "idempotency-key": "refused-url-1" },
      body: { url }
    })
    expect(created.status, created.text).toBe(201)
    const endpoint = created.body as { id: string; secret: string }
    expect((await first.admin("GET", `/organizations/${orgId}/webhooks`)).body.results[0].url_refused).toBeNull()
    first.service.child.kill("SIGTERM")
    expect(await first.service.exited).toBe(0)

    const second = await start({ SMS_WEBHOOK_ALLOW_PRIVATE: "false" })
    const [line] = await eventually(
      async () => refusalLines(second.service.output().stdout),
      (lines) => lines.length > 0,
      { timeoutMs: 30_000, what: "the start's warning" }
    )
    expect(line).toMatchObject({
      level: "WARN",
      annotations: { webhook_id: endpoint.id, organisation_id: orgId, host: "127.0.0.1" }
    })
    const { stdout } = second.service.output()
    expect(stdout).not.toContain("query-secret")
    expect(stdout).not.toContain("receiver-path")
    expect(stdout).not.toContain(endpoint.secret.slice("whsec_".length))

    const list = await second.admin("GET", `/organizations/${orgId}/webhooks`)
    expect(list.status, list.text).toBe(200)
    expect(list.body.results).toEqual([
      expect.objectContaining({ id: endpoint.id, url_refused: refusedByAddressRules })
    ])

    const path = `/api/sms/v2/webhooks/${endpoint.id}/`
    expect((await second.call("POST", `${path}test/`, { token: apiKey })).status).toBe(202)
    const log = await eventually(
      async () => (await second.call("GET", `${path}deliveries/`, { token: apiKey })).body,
      (body) => body.results[0]?.attempts >= 1,
      { timeoutMs: 30_000, what: "the first attempt" }
    )
    expect(log.results[0]).toMatchObject({
      type: "webhook.test",
      state: "pending",
      last_status_code: null,
      last_error: refusedByAddressRules
    })
    // once at start: nothing more was logged about it since
    expect(refusalLines(second.service.output().stdout)).toHaveLength(1)
  }, 240_000)
})
