/**
 * The embedded database: PGlite (PostgreSQL compiled to WASM) served in-process on a loopback
 * port by pglite-socket, so the service reaches it through the same `@effect/sql-pg` client as a
 * real server. The socket serves one connection at a time, hence the pool of one.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect } from "effect"
import { lockDataDir, StartupError } from "./DataDir.ts"

export interface EmbeddedServer {
  readonly host: string
  readonly port: number
}

const memory = "memory://"

/**
 * Longest the stop waits for the clients' connections to end. A connection the SQL client was
 * opening as a stop began (a SIGTERM while the service starts) reaches the socket server after
 * it stopped taking any, is ended by it, and is never closed by its abandoned client: waiting for
 * it would keep the process, and its data directory's lock, for ever.
 */
const stopWaitMs = 2_000

const firstLine = (cause: unknown): string => String(cause instanceof Error ? cause.message : cause).split("\n")[0]!

/**
 * Starts PGlite on `dataDir` (created if missing and locked for this process; `memory://` keeps
 * nothing) behind a loopback socket; stops both, and unlocks, with the scope. Fails with a
 * one-line StartupError when the directory cannot be used.
 */
export const embeddedServer = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const unlock =
        dataDir === memory
          ? () => {}
          : yield* Effect.try({
              try: () => lockDataDir(dataDir),
              catch: (cause) => (cause instanceof StartupError ? cause : new StartupError({ line: firstLine(cause) }))
            })
      return yield* Effect.tryPromise({
        try: async () => {
          const db = await PGlite.create(dataDir === memory ? undefined : dataDir)
          const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 100 })
          await server.start()
          const port = Number(server.getServerConn().split(":").pop())
          return { db, server, unlock, address: { host: "127.0.0.1", port } satisfies EmbeddedServer }
        },
        catch: (cause) => {
          unlock()
          return new StartupError({
            line: `SMS_DATA_DIR ${dataDir} cannot be used: the embedded database did not open (${firstLine(cause)})`
          })
        }
      })
    }),
    ({ db, server, unlock }) =>
      Effect.promise(async () => {
        let timer: ReturnType<typeof setTimeout> | undefined
        await Promise.race([server.stop(), new Promise((resolve) => (timer = setTimeout(resolve, stopWaitMs)))])
        clearTimeout(timer)
        // let the client's Terminate message drain before closing the database files
        await new Promise((resolve) => setTimeout(resolve, 20))
        await db.close()
        unlock()
      })
  ).pipe(Effect.map(({ address }) => address))
