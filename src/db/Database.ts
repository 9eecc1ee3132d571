/**
 * The SqlClient: a PostgreSQL server when `DATABASE_URL` is set, otherwise the embedded PGlite.
 * Both speak the same dialect through `@effect/sql-pg`; migrations run once the client is up.
 */
import { Effect, Layer } from "effect"
import * as Str from "effect/String"
import { AppConfig } from "../config/Config.ts"
import { embeddedServer } from "./Embedded.ts"
import { migrate } from "./Migrator.ts"
import { retiringClientLayer } from "./RetiringClient.ts"

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

/**
 * The PostgreSQL server's pool. Statements outside a transaction are pipelined: up to
 * `multiplexConcurrency` of them share a connection and go out in one write. Writing a statement
 * to the socket was a fifth of the service's CPU under scheduled admission (one system call a
 * statement); pipelined, scenario 1 admits 1.3-1.5 times as many requests a second at a lower
 * p99 (bench/HISTORY.md). A transaction still has its connection to itself: it waits for the
 * statements already written on it, then takes it. Four, not the driver's 32: a connection's
 * statements run one after the other in PostgreSQL, so a long one (a claim, a retention set)
 * delays at most three others. An interrupted statement is no longer cancelled on the server
 * (its caller is freed at once, the statement runs to its end), as when its answer is lost.
 * Not for the embedded database: its socket serves one connection, one statement at a time.
 *
 * JIT compilation is off for the service's sessions: its statements are short, and a plan
 * estimated above `jit_above_cost` (the dispatcher's claim, once messages were partitioned, whose
 * empty partitions the planner prices as pages it would read) spent 0.5 to 1.5 s compiling what
 * then ran in 5 ms.
 *
 * No commit of the service is ever cancelled on the server, so none waiting for the synchronous
 * standby is (a cancelled wait makes the transaction visible on the primary alone, acknowledged
 * without its copy: a failover loses it; docs/failover.md): a statement outside a transaction
 * is multiplexed, and an interrupted one runs to its end, its commit included; a transaction's
 * COMMIT runs uninterruptibly (effect/sql's withTransaction).
 * PostgreSQL's statement_timeout never covers a commit (it is disarmed before the commit runs).
 * test/faults/commit-wait.test.ts shows it.
 */
const pool = {
  maxConnections: 10,
  multiplex: true,
  multiplexConcurrency: 4,
  startupParameters: { jit: "off" }
} as const

/**
 * A client for the configured database, as it is: no migration applied. Its connections serve
 * only a server that takes writes and retire once it stops taking them (RetiringClient.ts).
 */
export const DatabaseClient = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (config.databaseUrl !== undefined) {
      return retiringClientLayer({ url: config.databaseUrl, ...pool, ...names })
    }
    const server = yield* embeddedServer(config.dataDir)
    return retiringClientLayer({
      host: server.host,
      port: server.port,
      username: "postgres",
      database: "postgres",
      maxConnections: 1,
      ...names
    })
  })
)

/** A client for the configured database, with migrations applied. */
export const databaseLayer = DatabaseClient.pipe(Layer.tap((context) => migrate.pipe(Effect.provideContext(context))))
