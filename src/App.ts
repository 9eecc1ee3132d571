/** The whole service as one layer: configuration, logging, database, services, HTTP server. */
import { Layer } from "effect"
import { HttpRouter } from "effect/http"
import { AdminToken } from "./admin/AdminToken.ts"
import { clockLayer } from "./clock/ServiceClock.ts"
import { type AppConfigShape, layerConfig } from "./Config.ts"
import { DatabaseLive } from "./db/Database.ts"
import { WorkersLive } from "./dispatch/Workers.ts"
import { NodeServerLive } from "./http/NodeServer.ts"
import { HttpAppLive, routes } from "./http/Server.ts"
import { ServicesLive } from "./Services.ts"
import { LoggingLive } from "./Logging.ts"
import { TracingLive } from "./observability/Tracing.ts"
import { SeedLive } from "./Seed.ts"

export const AppLive = (config: AppConfigShape) => {
  const Core = ServicesLive.pipe(Layer.provideMerge(DatabaseLive))
  const Startup = Layer.merge(SeedLive, WorkersLive).pipe(Layer.provideMerge(AdminToken.layer))
  return HttpRouter.serve(HttpAppLive, { disableLogger: true }).pipe(
    Layer.provideMerge(Startup),
    Layer.provideMerge(Core),
    // listening comes first: a busy port stops the start before anything is written (the data
    // directory, the database, the demo organisation); until the routes are served, requests get 503
    Layer.provideMerge(NodeServerLive(routes, { port: config.port, host: config.host })),
    Layer.provide(layerConfig(config)),
    Layer.provide(LoggingLive(config.logLevel)),
    Layer.provide(clockLayer(config.clock)),
    Layer.provide(TracingLive(config))
  )
}
