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

/**
 * `f` remembering its answers: the names it converts are the schema's column names, a small set,
 * and every row of every result has its keys converted (an unremembered conversion builds each
 * key anew, character by character: a third of what the drain allocated). Past `namesMax` distinct
 * names (not seen with this schema) it stops remembering new ones.
 */
const remembered = (f: (name: string) => string) => {
  const known = new Map<string, string>()
  return (name: string): string => {
    const hit = known.get(name)
    if (hit !== undefined) return hit
    const converted = f(name)
    if (known.size < namesMax) known.set(name, converted)
    return converted
  }
}
const namesMax = 4096

const names = {
  transformQueryNames: remembered(Str.camelToSnake),
  transformResultNames: remembered(Str.snakeToCamel),
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
