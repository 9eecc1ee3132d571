/**
 * `sms-admin clock show` and `clock advance` against an app on the test clock (docs/decisions.md#the-test-clock),
 * and `clock advance` refused with 409 clock_not_test (exit 1) on the system clock.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { appHttpClient } from "../support/AppHttpClient.ts"
import { adminToken, App, backend, withApp } from "../support/TestApp.ts"
import { runIn } from "./support.ts"

const env = { SMS_ADMIN_TOKEN: adminToken, SMS_ADMIN_URL: "http://sms.test" }
/** sms-admin run in-process (a program of its own) against the suite's app. */
const cli = (argv: ReadonlyArray<string>) =>
  Effect.flatMap(App, (app) => Effect.promise(() => runIn(appHttpClient(app.handler), argv, env)))

withApp({ label: "cli_clock", config: { clock: "test" } })(`sms-admin clock on the test clock (${backend})`, (it) => {
  it.effect("shows the clock, advances it by seconds and to an instant", () =>
    Effect.gen(function* () {
      const app = yield* App
      const shown = yield* cli(["clock", "show", "--json"])
      expect(shown.code, shown.stderr).toBe(0)
      const { now, mode } = JSON.parse(shown.stdout)
      expect(mode).toBe("test")

      const bySeconds = yield* cli(["clock", "advance", "--seconds", "90"])
      expect(bySeconds).toEqual({
        code: 0,
        stderr: "",
        stdout: `now  ${new Date(Date.parse(now) + 90_000).toISOString()}\n`
      })

      const to = new Date(Date.parse(now) + 3_600_000).toISOString()
      const toInstant = yield* cli(["clock", "advance", "--to", to, "--json"])
      expect(toInstant.code, toInstant.stderr).toBe(0)
      expect(JSON.parse(toInstant.stdout)).toEqual({ now: to })
      expect(yield* app.now).toBe(Date.parse(to))
    })
  )

  it.effect("exits 64 without --seconds or --to, or with both; 1 for a non-positive advance", () =>
    Effect.gen(function* () {
      expect((yield* cli(["clock", "advance"])).code).toBe(64)
      expect((yield* cli(["clock", "advance", "--seconds", "1", "--to", "2999-01-01T00:00:00Z"])).code).toBe(64)
      const refused = yield* cli(["clock", "advance", "--seconds", "-1"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("validation_error")
    })
  )
})

withApp()(`sms-admin clock on the system clock (${backend})`, (it) => {
  it.effect("shows the system clock; advance answers 409 clock_not_test, exit 1", () =>
    Effect.gen(function* () {
      const shown = yield* cli(["clock", "show"])
      expect(shown.code, shown.stderr).toBe(0)
      expect(shown.stdout).toMatch(/^now {3}\S+Z\nmode {2}system\n$/)
      const refused = yield* cli(["clock", "advance", "--seconds", "60"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("clock_not_test")
    })
  )
})
