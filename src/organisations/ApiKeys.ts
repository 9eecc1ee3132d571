/**
 * Organisation API keys, `svc_sms_<key_id>.<secret>`. The secret has 256 bits of entropy and is
 * stored only as its SHA-256 (a slow hash adds nothing against a secret that cannot be guessed);
 * comparison is constant-time.
 */
import { Context, Effect, Layer, Option } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { NotFound } from "../domain/Errors.ts"
import type { Permission } from "../domain/Permissions.ts"
import { isUuid } from "../domain/Uuid.ts"
import { Ids } from "../platform/Ids.ts"
import { now } from "../clock/Time.ts"
import { ApiKeyStore, type KeySummary, type StoredKey } from "./ApiKeyStore.ts"

export interface AuthenticatedKey {
  readonly organisationId: string
  readonly keyId: string
  readonly permissions: ReadonlyArray<Permission>
}

export interface IssuedKey {
  readonly keyId: string
  readonly apiKey: string
  readonly permissions: ReadonlyArray<Permission>
}

export type { KeySummary } from "./ApiKeyStore.ts"

const keyPattern = /^svc_sms_([a-z0-9]{20})\.([A-Za-z0-9_-]{43})$/

// Stryker disable next-line StringLiteral: equivalent, UTF-8 is the default encoding of a string
const sha256 = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

// Compared against when the key id is unknown, so both paths do the same work.
// Stryker disable next-line StringLiteral: equivalent, no secret hashes to the decoy's hash, whatever it hashes
const decoyHash = sha256("decoy")

/**
 * How long this process trusts a key it has read (ms): the key lookup is one of an admission's two
 * statements, and a client sends many requests with one key. A revocation made through this
 * process is seen at once; one made through another process on the same database, within this.
 */
export const keyTrustMs = 1_000
/** Most keys remembered at once; past it the memory starts again. */
const keysRemembered = 10_000

/** The keys read lately, by key id, each with the (monotonic) time it is trusted until. */
const keyMemory = () => {
  const keys = new Map<string, { readonly key: StoredKey; readonly until: number }>()
  // a revocation moves it on: a read that began before it is not remembered after it
  let revocations = 0
  return {
    get revocations() {
      return revocations
    },
    // the process's own monotonic time, not the service's clock: the test clock stands still (which is
    // also why this is not effect's Cache, whose time to live reads the Clock)
    recall: (keyId: string): StoredKey | undefined => {
      const known = keys.get(keyId)
      // Stryker disable next-line EqualityOperator: equivalent, a key is never looked up at the very microsecond its trust ends
      if (known !== undefined && known.until > performance.now()) return known.key
      keys.delete(keyId)
      return undefined
    },
    remember: (keyId: string, key: StoredKey, readAfter: number) => {
      if (readAfter !== revocations) return
      // Stryker disable next-line ConditionalExpression,EqualityOperator: a bound on the memory used, not behaviour (forgetting only costs a read)
      if (keys.size >= keysRemembered) keys.clear()
      keys.set(keyId, { key, until: performance.now() + keyTrustMs })
    },
    forget: (keyId: string) => {
      revocations++
      keys.delete(keyId)
    }
  }
}

// Stryker disable StringLiteral: the service's key ("sms/ApiKeys" below) is unique whatever its text
export class ApiKeys extends Context.Service<
  ApiKeys,
  {
    /** Issues a key with these permissions; the full key is returned once and never stored. */
    readonly issue: (
      organisationId: string,
      permissions: ReadonlyArray<Permission>
    ) => Effect.Effect<IssuedKey, NotFound | DatabaseUnavailable>
    /** The key's organisation and permissions when the token is a live key, else none. */
    readonly authenticate: (token: string) => Effect.Effect<Option.Option<AuthenticatedKey>, DatabaseUnavailable>
    /** The organisation's keys, oldest first, revoked ones included; NotFound when no such organisation. */
    readonly list: (organisationId: string) => Effect.Effect<ReadonlyArray<KeySummary>, NotFound | DatabaseUnavailable>
    /** Revokes a key for good; NotFound when no such key. */
    readonly revoke: (keyId: string) => Effect.Effect<void, NotFound | DatabaseUnavailable>
  }
>()("sms/ApiKeys") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(
    ApiKeys,
    Effect.gen(function* () {
      const store = yield* ApiKeyStore
      const ids = yield* Ids
      const memory = keyMemory()
      const find = (keyId: string) =>
        Effect.suspend(() => {
          const known = memory.recall(keyId)
          if (known !== undefined) return Effect.succeed(known)
          const readAfter = memory.revocations
          return Effect.tap(store.find(keyId), (row) =>
            Effect.sync(() => row !== undefined && memory.remember(keyId, row, readAfter))
          )
        })

      return ApiKeys.of({
        // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
        issue: Effect.fn("ApiKeys.issue")(function* (organisationId, permissions) {
          if (!isUuid(organisationId)) return yield* NotFound.withMessage(`No organisation ${organisationId}`)
          // Stryker disable next-line MethodExpression: the slice is a guard, 15 random bytes are 20 base64url characters
          const keyId = (yield* ids.secret(15))
            .toLowerCase()
            .replace(/[^a-z0-9]/g, "0")
            .slice(0, 20)
          const secret = yield* ids.secret(32)
          const unique = [...new Set(permissions)]
          if (!(yield* store.insert(organisationId, keyId, sha256(secret), unique, yield* now))) {
            return yield* NotFound.withMessage(`No organisation ${organisationId}`)
          }
          return { keyId, apiKey: `svc_sms_${keyId}.${secret}`, permissions: unique }
        }),
        // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
        authenticate: Effect.fn("ApiKeys.authenticate")(function* (token) {
          const match = keyPattern.exec(token)
          if (match === null) return Option.none()
          const [, keyId, secret] = match as unknown as [string, string, string]
          const row = yield* find(keyId)
          const matches = timingSafeEqual(sha256(secret), row === undefined ? decoyHash : Buffer.from(row.secretSha256))
          return (
            // Stryker disable next-line ConditionalExpression: equivalent, without a row the secret was compared with the decoy, which no secret matches
            row !== undefined && matches && !row.revoked
              ? Option.some({ organisationId: row.organisationId, keyId, permissions: row.permissions })
              : Option.none()
          )
        }),
        // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
        list: Effect.fn("ApiKeys.list")(function* (organisationId) {
          const keys = isUuid(organisationId) ? yield* store.ofOrganisation(organisationId) : undefined
          return keys === undefined ? yield* NotFound.withMessage(`No organisation ${organisationId}`) : keys
        }),
        // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
        revoke: Effect.fn("ApiKeys.revoke")(function* (keyId) {
          const revoked = yield* store
            .revoke(keyId, yield* now)
            .pipe(Effect.ensuring(Effect.sync(() => memory.forget(keyId))))
          if (!revoked) return yield* NotFound.withMessage(`No API key ${keyId}`)
        })
      })
    })
  ).pipe(Layer.provideMerge(ApiKeyStore.layer))
}
