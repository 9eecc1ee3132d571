/** A OneAPI route against the fake, on the live clock, and the messages the tests send through it. */
import { Clock, Effect } from "effect"
import type { OneApiRouteSettings } from "../../../src/config/OneApiSettings.ts"
import { defaultTiming } from "../../../src/config/SmppSettings.ts"
import { OneApiRoute } from "../../../src/provider/oneapi/OneApiRoute.ts"
import type { Submission } from "../../../src/provider/Provider.ts"

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
