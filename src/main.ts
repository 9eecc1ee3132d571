/**
 * Starts the service: `npm start`. Stops cleanly on SIGTERM / SIGINT (exit status 0), and under
 * `npm start` also once npm is gone (a SIGTERM to npm never reaches this process); a start that
 * fails prints one line on stderr (one per bad variable of the configuration) and exits with
 * status 1.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { mainLayer } from "./app/AppLayer.ts"
import { decodeConfig } from "./config/Config.ts"
import { printLines } from "./config/EnvFields.ts"
import { startupFailureLine } from "./app/StartupFailure.ts"
import { whenParentGone } from "./platform/ParentWatch.ts"

decodeConfig().pipe(
  Effect.tapError(printLines),
  Effect.flatMap((config) =>
    Layer.launch(mainLayer(config)).pipe(
      Effect.tapCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.void
          : Effect.sync(() => process.stderr.write(`${startupFailureLine(cause, config)}\n`))
      )
    )
  ),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // a stop asked for by a signal is a clean stop
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)

// a supervisor that stops `npm start` signals npm, whose shell dies without passing the signal on:
// once npm is gone, the service stops as on its own SIGTERM (ports, binds and the data directory released)
if (process.env.npm_lifecycle_event === "start") {
  whenParentGone(() => {
    if (process.env.LOG_LEVEL !== "error") {
      const line = {
        message: "npm is gone: stopping as on SIGTERM",
        level: "WARN",
        timestamp: new Date().toISOString()
      }
      process.stdout.write(`${JSON.stringify(line)}\n`)
    }
    process.kill(process.pid, "SIGTERM")
  })
}
