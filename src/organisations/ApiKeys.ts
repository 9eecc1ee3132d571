/**
 * Organisation API keys, `svc_sms_<key_id>.<secret>`. The secret has 256 bits of entropy and is
 * stored only as its SHA-256 (a slow hash adds nothing against a secret that cannot be guessed);
 * comparison is constant-time.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { createHash, timingSafeEqual } from "node:crypto"
import { NotFound } from "../domain/Errors.ts"
import type { Permission } from "../domain/Permissions.ts"
import { isUuid } from "../domain/Uuid.ts"
import { Ids } from "../Ids.ts"
import { now } from "../Time.ts"

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

/** What the operator may see of a key: never its secret. */
export interface KeySummary {
  readonly keyId: string
  readonly permissions: ReadonlyArray<Permission>
  readonly createdAt: Date
  readonly revokedAt: Date | null
}

const keyPattern = /^svc_sms_([a-z0-9]{20})\.([A-Za-z0-9_-]{43})$/

// Stryker disable next-line StringLiteral: equivalent, UTF-8 is the default encoding of a string
const sha256 = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

// Compared against when the key id is unknown, so both paths do the same work.
// Stryker disable next-line StringLiteral: equivalent, no secret hashes to the decoy's hash, whatever it hashes
const decoyHash = sha256("decoy")

// Stryker disable StringLiteral: the service's key ("sms/ApiKeys" below) is unique whatever its text
export class ApiKeys extends Context.Service<ApiKeys, {
  /** Issues a key with these permissions; the full key is returned once and never stored. */
  readonly issue: (organisationId: string, permissions: ReadonlyArray<Permission>) => Effect.Effect<IssuedKey, NotFound | SqlError.SqlError>
  /** The key's organisation and permissions when the token is a live key, else none. */
  readonly authenticate: (token: string) => Effect.Effect<Option.Option<AuthenticatedKey>, SqlError.SqlError>
  /** The organisation's keys, oldest first, revoked ones included; NotFound when no such organisation. */
  readonly list: (organisationId: string) => Effect.Effect<ReadonlyArray<KeySummary>, NotFound | SqlError.SqlError>
  /** Revokes a key for good; NotFound when no such key. */
  readonly revoke: (keyId: string) => Effect.Effect<void, NotFound | SqlError.SqlError>
}>()("sms/ApiKeys") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(ApiKeys, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids

    return ApiKeys.of({
      // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
      issue: Effect.fn("ApiKeys.issue")(function*(organisationId, permissions) {
        if (!isUuid(organisationId)) return yield* NotFound.withMessage(`No organisation ${organisationId}`)
        // Stryker disable next-line MethodExpression: the slice is a guard, 15 random bytes are 20 base64url characters
        const keyId = (yield* ids.secret(15)).toLowerCase().replace(/[^a-z0-9]/g, "0").slice(0, 20)
        const secret = yield* ids.secret(32)
        const unique = [...new Set(permissions)]
        const inserted = yield* sql<{ keyId: string }>`INSERT INTO api_keys
            (key_id, organisation_id, secret_sha256, permissions, created_at)
          SELECT ${keyId}, id, ${sha256(secret)}, ${unique}::text[], ${yield* now}
          FROM organisations WHERE id = ${organisationId}
          RETURNING key_id`
        if (inserted.length === 0) return yield* NotFound.withMessage(`No organisation ${organisationId}`)
        return { keyId, apiKey: `svc_sms_${keyId}.${secret}`, permissions: unique }
      }),
      // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
      authenticate: Effect.fn("ApiKeys.authenticate")(function*(token) {
        const match = keyPattern.exec(token)
        if (match === null) return Option.none()
        const [, keyId, secret] = match as unknown as [string, string, string]
        const rows = yield* sql<{ organisationId: string; secretSha256: Uint8Array; permissions: Array<Permission>; revoked: boolean }>`
          SELECT organisation_id::text, secret_sha256, permissions, revoked_at IS NOT NULL AS revoked
          FROM api_keys WHERE key_id = ${keyId}`
        const row = rows[0]
        const matches = timingSafeEqual(sha256(secret), row === undefined ? decoyHash : Buffer.from(row.secretSha256))
        return (
          // Stryker disable next-line ConditionalExpression: equivalent, without a row the secret was compared with the decoy, which no secret matches
          row !== undefined &&
          matches && !row.revoked
        )
          ? Option.some({ organisationId: row.organisationId, keyId, permissions: row.permissions })
          : Option.none()
      }),
      // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
      list: Effect.fn("ApiKeys.list")(function*(organisationId) {
        if (!isUuid(organisationId)) return yield* NotFound.withMessage(`No organisation ${organisationId}`)
        // the organisation joined first: no row means no organisation, a null key_id means no key
        const rows = yield* sql<{ keyId: string | null; permissions: Array<Permission>; createdAt: Date; revokedAt: Date | null }>`
          SELECT k.key_id, k.permissions, k.created_at, k.revoked_at
          FROM organisations o LEFT JOIN api_keys k ON k.organisation_id = o.id
          WHERE o.id = ${organisationId} ORDER BY k.created_at, k.key_id`
        if (rows.length === 0) return yield* NotFound.withMessage(`No organisation ${organisationId}`)
        return rows.flatMap((r) =>
          r.keyId === null ? [] : [{ keyId: r.keyId, permissions: r.permissions, createdAt: r.createdAt, revokedAt: r.revokedAt }]
        )
      }),
      // Stryker disable next-line StringLiteral: a span name, a label of traces, not behaviour
      revoke: Effect.fn("ApiKeys.revoke")(function*(keyId) {
        const rows = yield* sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${yield* now})
          WHERE key_id = ${keyId} RETURNING key_id`
        if (rows.length === 0) return yield* NotFound.withMessage(`No API key ${keyId}`)
      })
    })
  }))
}
