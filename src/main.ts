/**
 * Starts the service: `npm start`. Stops cleanly on SIGTERM / SIGINT (exit status 0); a start
 * that fails prints one line on stderr (one per bad variable of the configuration) and exits
 * with status 1.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { mainLayer } from "./app/AppLayer.ts"
import { decodeConfig } from "./config/Config.ts"
import { printLines } from "./config/EnvFields.ts"
import { startupFailureLine } from "./app/StartupFailure.ts"

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
