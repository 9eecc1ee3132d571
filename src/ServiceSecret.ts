/**
 * The server-side secret that keys HMACs (idempotency fingerprints, batch cursors). Generated
 * once by the first process and kept in the database, so every process and restart agrees.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac, randomBytes } from "node:crypto"

export class ServiceSecret extends Context.Service<ServiceSecret, {
  /** HMAC-SHA256 of `data` under the service secret, base64url. */
  readonly sign: (data: string) => string
}>()("sms/ServiceSecret") {
  static readonly layer = Layer.effect(ServiceSecret, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO service_secrets (name, secret) VALUES ('hmac', ${randomBytes(32)}) ON CONFLICT DO NOTHING`
    const [row] = yield* sql<{ secret: Uint8Array }>`SELECT secret FROM service_secrets WHERE name = 'hmac'`
    const key = Buffer.from(row!.secret)
    return ServiceSecret.of({
      sign: (data) => createHmac("sha256", key).update(data, "utf8").digest("base64url")
    })
  }))
}
