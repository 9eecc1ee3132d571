/** Starts the service: `npm start`. Stops cleanly on SIGTERM / SIGINT. */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { AppLive } from "./App.ts"
import { decodeConfig } from "./Config.ts"

const decoded = decodeConfig(process.env)
if (!decoded.ok) {
  for (const line of decoded.errors) process.stderr.write(`configuration error: ${line}\n`)
  process.exit(1)
}

Layer.launch(AppLive(decoded.config)).pipe(NodeRuntime.runMain)
