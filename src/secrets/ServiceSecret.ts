/**
 * The server-side secret that keys HMACs (idempotency fingerprints, batch cursors). Generated
 * once by the first process and kept (SecretStore), so every process and restart agrees.
 */
import { Context, Effect, Layer } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import { SecretStore } from "./SecretStore.ts"

export class ServiceSecret extends Context.Service<
  ServiceSecret,
  {
    /** HMAC-SHA256 of `data` under the service secret, base64url. */
    readonly sign: (data: string) => string
  }
>()("sms/ServiceSecret") {
  static readonly layer = Layer.effect(
    ServiceSecret,
    Effect.gen(function* () {
      const key = yield* (yield* SecretStore).keep("hmac", randomBytes(32))
      return ServiceSecret.of({
        sign: (data) => createHmac("sha256", key).update(data, "utf8").digest("base64url")
      })
    })
  )
}
