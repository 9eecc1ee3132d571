/** Identifiers and secrets, through a service so tests can make them deterministic. */
import { Context, Effect, Layer } from "effect"
import { randomBytes, randomUUID } from "node:crypto"

export class Ids extends Context.Service<Ids, {
  /** A new random UUID (v4). */
  readonly uuid: Effect.Effect<string>
  /** `bytes` cryptographically random bytes, base64url-encoded. */
  readonly secret: (bytes: number) => Effect.Effect<string>
}>()("sms/Ids") {
  static readonly layer = Layer.succeed(Ids, Ids.of({
    uuid: Effect.sync(() => randomUUID()),
    secret: (bytes) => Effect.sync(() => randomBytes(bytes).toString("base64url"))
  }))
}
