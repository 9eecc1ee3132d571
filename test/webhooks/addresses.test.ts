/** The address rules of webhook URLs (docs/decisions.md#webhooks) with SMS_WEBHOOK_ALLOW_PRIVATE=false. */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { isPrivateAddress, resolveTarget } from "../../src/webhooks/Addresses.ts"
import { expectValidation } from "../http/helpers.ts"
import { App, withApp } from "../support/TestApp.ts"
import { newKey, webhooksPath, withWebhooks } from "./support.ts"

// the app (the embedded database and its migrations) starts before the first test: slow on a loaded machine
describe("webhook addresses", { timeout: 120_000 }, () => {
  withApp({ config: { webhookAllowPrivate: false } })((it) => {
    it("tells loopback, private, link-local and unspecified addresses from public ones", () => {
      for (const a of [
        "127.0.0.1",
        "10.0.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "169.254.1.1",
        "0.0.0.0",
        "100.64.0.1",
        "::1",
        "::",
        "fe80::1",
        "fd12::1",
        "::ffff:10.0.0.1"
      ]) {
        expect(isPrivateAddress(a), a).toBe(true)
      }
      for (const a of ["8.8.8.8", "172.32.0.1", "192.169.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"])
        expect(isPrivateAddress(a), a).toBe(false)
    })

    it.effect("resolves a host and refuses it when any of its addresses is private, unless allowed", () =>
      Effect.gen(function* () {
        const refused = yield* Effect.flip(resolveTarget(new URL("http://localhost:1/x"), false))
        expect(refused).toMatch(/loopback/)
        const allowed = yield* resolveTarget(new URL("http://127.0.0.1:1/x"), true)
        expect(allowed).toEqual({ address: "127.0.0.1", family: 4 })
      })
    )

    it.effect("the API refuses such hosts at creation with 400 naming url", () =>
      Effect.gen(function* () {
        const publicApp = yield* App
        const { apiKey } = yield* publicApp.newOrg({ permissions: withWebhooks })
        for (const host of [
          "127.0.0.1",
          "localhost",
          "10.1.2.3",
          "172.16.0.1",
          "192.168.1.1",
          "169.254.169.254",
          "0.0.0.0",
          "[::1]",
          "[fe80::1]",
          "[fd00::1]",
          "[::ffff:127.0.0.1]"
        ]) {
          const res = yield* publicApp.call("POST", webhooksPath, {
            token: apiKey,
            headers: { "idempotency-key": newKey() },
            body: { url: `http://${host}/hooks` }
          })
          expect(expectValidation(res), host).toEqual(["url"])
        }
      })
    )
  })
})
