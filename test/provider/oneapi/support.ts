/**
 * A OneAPI route against the fake, on the live clock, and the messages the tests send through it;
 * and the whole service sending through the OneAPI simulator (`oneApiApp`).
 */
import { Clock, Effect, Redacted } from "effect"
import type { OneApiSim } from "../../../simulator/oneapi/OneApiSim.ts"
import type { AppConfigShape } from "../../../src/config/Config.ts"
import type { OneApiRouteSettings } from "../../../src/config/OneApiSettings.ts"
import { defaultTiming, type SmppSettings } from "../../../src/config/SmppSettings.ts"
import { OneApiRoute } from "../../../src/provider/oneapi/OneApiRoute.ts"
import type { Submission } from "../../../src/provider/Provider.ts"
import type { HandlerServer } from "../../support/HandlerServer.ts"
import { App, type TestAppOptions } from "../../support/TestApp.ts"
import { smppConfig } from "../smpp/service.ts"

/** The submit deadline of these tests (SMS_SMPP_RESPONSE_TIMEOUT_MS). */
export const responseTimeoutMs = 1200

export const testTiming = { ...defaultTiming, throttleInitialMs: 20, throttleMaxMs: 80 }

export const publicUrl = "http://sms.example"

/** A route over `settings`, on the current clock, with the tests' deadline (or `timeoutMs`). */
export const makeRoute = (settings: OneApiRouteSettings, timeoutMs = responseTimeoutMs) =>
  Effect.map(
    Effect.clockWith(Effect.succeed),
    (clock) => new OneApiRoute(settings, timeoutMs, testTiming, clock, publicUrl)
  )

let ids = 0
/** A message to `to`, with an id of its own. */
export const submission = (to = "+261320000001"): Submission => ({
  organisationId: "00000000-0000-7000-8000-000000000001",
  messageId: `00000000-0000-7000-8000-${String(++ids).padStart(12, "0")}`,
  to,
  senderName: "Shop",
  text: "Salama!",
  segments: 1
})

/** Sends `s` through `route` with the tests' deadline (or `timeoutMs`). */
export const send = (route: OneApiRoute, s: Submission, timeoutMs = responseTimeoutMs) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => route.submit(s, now + timeoutMs))

/** An entry `orange` to the OneAPI simulator `sim` (its default client `sim` / `sim`) serving every number. */
export const oneApiRouteTo = (sim: OneApiSim, overrides: Partial<OneApiRouteSettings> = {}): OneApiRouteSettings => ({
  name: "orange",
  baseUrl: sim.baseUrl,
  tokenUrl: sim.tokenUrl,
  clientId: "sim",
  clientSecret: Redacted.make("sim"),
  senderAddress: "tel:+2610000",
  prefixes: ["*"],
  mps: 0,
  verifyByCorrelator: false,
  fallback: undefined,
  ...overrides
})

/**
 * withApp's options and setup for the whole service sending every number through one OneAPI entry
 * (docs/operators.md#oneapi-routes), its loops running, on a database of its own (`label`); its
 * public URL is `bridge`'s, which serves the app's handler once it is built, so that the
 * simulator's receipts reach the notify route. `start` runs first (it starts the simulator and the
 * bridge) and gives the entry.
 */
export const oneApiApp = (
  label: string,
  start: () => Promise<{ readonly route: OneApiRouteSettings; readonly bridge: HandlerServer }>,
  smpp: Partial<SmppSettings> = {},
  config: Partial<AppConfigShape> = {}
) => {
  let bridge: HandlerServer | undefined
  const options: Effect.Effect<TestAppOptions> = Effect.promise(async () => {
    const started = await start()
    bridge = started.bridge
    return { label, config: smppConfig([], { oneapi: [started.route], ...smpp }, { ...config, publicUrl: bridge.url }) }
  })
  const setup = Effect.map(App, (app) => {
    bridge!.handler = app.handler
  })
  return { options, setup }
}
