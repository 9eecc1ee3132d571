/**
 * The SqlClient: a PostgreSQL server when `DATABASE_URL` is set, otherwise the embedded PGlite.
 * Both speak the same dialect through `@effect/sql-pg`; migrations run once the client is up.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import * as Str from "effect/String"
import { AppConfig } from "../config/Config.ts"
import { embeddedServer } from "./Embedded.ts"
import { migrate } from "./Migrator.ts"

const names = {
  transformQueryNames: Str.camelToSnake,
  transformResultNames: Str.snakeToCamel,
  connectTimeout: "5 seconds",
  applicationName: "sms-service"
} as const

/** A client for the configured database, as it is: no migration applied. */
export const DatabaseClient = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.databaseUrl !== undefined) {
    return PgClient.layer({ url: config.databaseUrl, maxConnections: 10, ...names })
  }
  const server = yield* embeddedServer(config.dataDir)
  return PgClient.layer({
    host: server.host,
    port: server.port,
    username: "postgres",
    database: "postgres",
    maxConnections: 1,
    ...names
  })
}))

/** A client for the configured database, with migrations applied. */
export const DatabaseLive = DatabaseClient.pipe(Layer.tap((context) => migrate.pipe(Effect.provideContext(context))))
