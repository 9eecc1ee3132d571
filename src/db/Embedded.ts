/**
 * The embedded database: PGlite (PostgreSQL compiled to WASM) served in-process on a loopback
 * port by pglite-socket, so the service reaches it through the same `@effect/sql-pg` client as a
 * real server. The socket serves one connection at a time, hence the pool of one.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"

export interface EmbeddedServer {
  readonly host: string
  readonly port: number
}

const memory = "memory://"

/** Starts PGlite on `dataDir` (created if missing; `memory://` keeps nothing) behind a loopback socket; stops both with the scope. */
export const embeddedServer = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        if (dataDir !== memory) mkdirSync(dataDir, { recursive: true })
        const db = await PGlite.create(dataDir === memory ? undefined : dataDir)
        const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 100 })
        await server.start()
        const port = Number(server.getServerConn().split(":").pop())
        return { db, server, address: { host: "127.0.0.1", port } satisfies EmbeddedServer }
      },
      catch: (cause) => new Error(`cannot open the embedded database in ${dataDir}: ${String(cause)}`)
    }),
    ({ db, server }) =>
      Effect.promise(async () => {
        await server.stop()
        // let the client's Terminate message drain before closing the database files
        await new Promise((resolve) => setTimeout(resolve, 20))
        await db.close()
      })
  ).pipe(Effect.map(({ address }) => address))
