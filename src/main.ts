/**
 * Starts the service: `npm start`. Stops cleanly on SIGTERM / SIGINT (exit status 0); a start
 * that fails prints one line on stderr and exits with status 1.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { AppLive } from "./App.ts"
import { decodeConfig } from "./Config.ts"
import { startupFailureLine } from "./StartupFailure.ts"

const decoded = decodeConfig(process.env)
if (!decoded.ok) {
  for (const line of decoded.errors) process.stderr.write(`configuration error: ${line}\n`)
  process.exit(1)
}
const config = decoded.config

Layer.launch(AppLive(config)).pipe(
  Effect.tapCause((cause) =>
    Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.sync(() => process.stderr.write(`${startupFailureLine(cause, config)}\n`))
  ),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // a stop asked for by a signal is a clean stop
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
