/**
 * The table of organisation API keys, owned here: a key's id, its organisation, the SHA-256 of its
 * secret (never the secret), its permissions, and when it was created and revoked.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { Permission } from "../domain/Permissions.ts"

/** What the operator may see of a key: never its secret. */
export interface KeySummary {
  readonly keyId: string
  readonly permissions: ReadonlyArray<Permission>
  readonly createdAt: Date
  readonly revokedAt: Date | null
}

/** A stored key as authentication reads it. */
export interface StoredKey {
  readonly organisationId: string
  readonly secretSha256: Uint8Array
  readonly permissions: Array<Permission>
  readonly revoked: boolean
}

// Stryker disable StringLiteral: the service's key ("sms/ApiKeyStore" below) is unique whatever its text
export class ApiKeyStore extends Context.Service<
  ApiKeyStore,
  {
    /** Stores a key of the organisation; false when there is no such organisation. */
    readonly insert: (
      organisationId: string,
      keyId: string,
      secretSha256: Uint8Array,
      permissions: ReadonlyArray<Permission>,
      at: Date
    ) => Fails<boolean>
    readonly find: (keyId: string) => Fails<StoredKey | undefined>
    /** The organisation's keys, oldest first; undefined when there is no such organisation. */
    readonly ofOrganisation: (organisationId: string) => Fails<ReadonlyArray<KeySummary> | undefined>
    /** Marks a key revoked (once); false when there is no such key. */
    readonly revoke: (keyId: string, at: Date) => Fails<boolean>
  }
>()("sms/ApiKeyStore") {
  // Stryker restore StringLiteral
  static readonly layer = Layer.effect(
    ApiKeyStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return ApiKeyStore.of({
        insert: (organisationId, keyId, secretSha256, permissions, at) =>
          fromDatabase(
            sql`INSERT INTO api_keys (key_id, organisation_id, secret_sha256, permissions, created_at)
          SELECT ${keyId}, id, ${secretSha256}, ${permissions}::text[], ${at}
          FROM organisations WHERE id = ${organisationId}
          RETURNING key_id`.pipe(Effect.map((rows) => rows.length > 0))
          ),
        find: (keyId) =>
          fromDatabase(
            sql<StoredKey>`SELECT organisation_id::text, secret_sha256, permissions, revoked_at IS NOT NULL AS revoked
          FROM api_keys WHERE key_id = ${keyId}`.pipe(Effect.map((rows) => rows[0]))
          ),
        ofOrganisation: (organisationId) =>
          // the organisation joined first: no row means no organisation, a null key_id means no key
          fromDatabase(
            sql<{ keyId: string | null; permissions: Array<Permission>; createdAt: Date; revokedAt: Date | null }>`
          SELECT k.key_id, k.permissions, k.created_at, k.revoked_at
          FROM organisations o LEFT JOIN api_keys k ON k.organisation_id = o.id
          WHERE o.id = ${organisationId} ORDER BY k.created_at, k.key_id`.pipe(
              Effect.map((rows) =>
                rows.length === 0
                  ? undefined
                  : rows.flatMap((r) =>
                      r.keyId === null
                        ? []
                        : [
                            {
                              keyId: r.keyId,
                              permissions: r.permissions,
                              createdAt: r.createdAt,
                              revokedAt: r.revokedAt
                            }
                          ]
                    )
              )
            )
          ),
        revoke: (keyId, at) =>
          fromDatabase(
            sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${at}) WHERE key_id = ${keyId} RETURNING key_id`.pipe(
              Effect.map((rows) => rows.length > 0)
            )
          )
      })
    })
  )
}
