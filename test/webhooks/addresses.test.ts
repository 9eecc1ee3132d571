/** The address rules of webhook URLs (contract section 10) with SMS_WEBHOOK_ALLOW_PRIVATE=false. */
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { isPrivateAddress, resolveTarget } from "../../src/webhooks/Addresses.ts"
import { expectValidation } from "../http/helpers.ts"
import { makeTestApp } from "../support/TestApp.ts"
import { newKey, webhooksPath, withWebhooks } from "./support.ts"

const publicApp = makeTestApp({ config: { webhookAllowPrivate: false } })
afterAll(() => publicApp.dispose())

// the first test starts the app (the embedded database and its migrations): slow on a loaded machine
describe("webhook addresses", { timeout: 120_000 }, () => {
  it("tells loopback, private, link-local and unspecified addresses from public ones", () => {
    for (const a of ["127.0.0.1", "10.0.0.1", "172.31.255.255", "192.168.0.1", "169.254.1.1", "0.0.0.0", "100.64.0.1", "::1", "::", "fe80::1", "fd12::1", "::ffff:10.0.0.1"]) {
      expect(isPrivateAddress(a), a).toBe(true)
    }
    for (const a of ["8.8.8.8", "172.32.0.1", "192.169.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"]) expect(isPrivateAddress(a), a).toBe(false)
  })

  it("resolves a host and refuses it when any of its addresses is private, unless allowed", async () => {
    const refused = await Effect.runPromise(Effect.flip(resolveTarget(new URL("http://localhost:1/x"), false)))
    expect(refused).toMatch(/loopback/)
    const allowed = await Effect.runPromise(resolveTarget(new URL("http://127.0.0.1:1/x"), true))
    expect(allowed).toEqual({ address: "127.0.0.1", family: 4 })
  })

  it("the API refuses such hosts at creation with 400 naming url", async () => {
    const { apiKey } = await publicApp.newOrg({ permissions: withWebhooks })
    for (const host of ["127.0.0.1", "localhost", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0", "[::1]", "[fe80::1]", "[fd00::1]", "[::ffff:127.0.0.1]"]) {
      const res = await publicApp.call("POST", webhooksPath, { token: apiKey, headers: { "idempotency-key": newKey() }, body: { url: `http://${host}/hooks` } })
      expect(expectValidation(res), host).toEqual(["url"])
    }
  })

})
