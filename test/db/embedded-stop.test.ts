/**
 * Stopping the embedded database never waits for a client: a SIGTERM that comes while the
 * service is still starting finds the SQL client's connection on its way in (it reaches the
 * socket server after the stop began, is ended by it, and is never read again); the stop closes
 * the database and releases the data directory all the same, so the process ends.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { lockFileName } from "../../src/db/DataDir.ts"
import { embeddedServer } from "../../src/db/Embedded.ts"

const temp = mkdtempSync(join(tmpdir(), "sms-embedded-stop-"))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

describe("the embedded database's stop", () => {
  it("ends with a client connection still open that never reads, and releases the data directory", async () => {
    const dataDir = join(temp, "data")
    const scope = Scope.makeUnsafe()
    const address = await Effect.runPromise(Scope.provide(embeddedServer(dataDir), scope))
    expect(existsSync(join(dataDir, lockFileName))).toBe(true)
    // a client that keeps its side open and reads nothing (an abandoned connection attempt)
    const client: Socket = await new Promise((resolve, reject) => {
      const socket = connect({ host: address.host, port: address.port, allowHalfOpen: true })
      socket.once("connect", () => resolve(socket))
      socket.once("error", reject)
    })
    client.pause()
    try {
      const started = Date.now()
      const closed = Effect.runPromise(Scope.close(scope, Exit.void)).then(() => "closed" as const)
      const waited = new Promise<"stuck">((resolve) => setTimeout(() => resolve("stuck"), 20_000))
      expect(await Promise.race([closed, waited])).toBe("closed")
      expect(Date.now() - started).toBeLessThan(15_000)
      expect(existsSync(join(dataDir, lockFileName))).toBe(false)
    } finally {
      client.destroy()
    }
  }, 120_000)
})
