/**
 * A `"type": "oneapi"` entry of SMS_PROVIDERS_FILE (docs/operators.md#oneapi-routes): its
 * schema and its settings. The client secret is never echoed: a problem with it is told without
 * its value.
 */
import { Redacted, Schema } from "effect"
import { isBaseHttpUrl } from "./HttpUrl.ts"
import type { OneApiRouteSettings } from "./OneApiSettings.ts"

const httpUrl = Schema.String.check(
  Schema.makeFilter((raw: string) =>
    isBaseHttpUrl(raw) ? undefined : "must be an http:// or https:// URL without credentials, query or fragment"
  )
)

/** An entry's name: the prefix of its provider refs and notify paths, and what a `fallback` names. */
export const entryName = Schema.String.check(
  Schema.isPattern(/^[a-z0-9_-]{1,32}$/, { message: "must be 1 to 32 lower-case letters, digits, - or _" })
)

export const prefixList = Schema.Array(
  Schema.String.check(Schema.isPattern(/^(\*|\+[0-9]{1,15})$/, { message: 'must be "*" or "+" followed by digits' }))
).check(Schema.isMinLength(1, { message: "must list at least one prefix" }))

export const OneApiEntry = Schema.Struct({
  type: Schema.Literal("oneapi"),
  name: entryName,
  base_url: httpUrl,
  token_url: httpUrl,
  client_id: Schema.String.check(Schema.isNonEmpty({ message: "must not be empty" })),
  client_secret: Schema.String.check(Schema.isNonEmpty({ message: "must not be empty" })),
  sender_address: Schema.String.check(
    Schema.isPattern(/^tel:\+[0-9]{1,15}$/, { message: 'must be "tel:+" followed by digits' })
  ),
  prefixes: prefixList,
  mps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 }))),
  verify_by_correlator: Schema.optionalKey(Schema.Boolean),
  fallback: Schema.optionalKey(entryName)
})
export type OneApiEntry = typeof OneApiEntry.Type

/** The settings of a decoded entry, `mps` defaulting to SMS_SMPP_MPS. */
export const oneApiSettings = (entry: OneApiEntry, defaultMps: number): OneApiRouteSettings => ({
  name: entry.name,
  baseUrl: entry.base_url.replace(/\/+$/, ""),
  tokenUrl: entry.token_url,
  clientId: entry.client_id,
  clientSecret: Redacted.make(entry.client_secret),
  senderAddress: entry.sender_address,
  prefixes: entry.prefixes,
  mps: entry.mps ?? defaultMps,
  verifyByCorrelator: entry.verify_by_correlator ?? false,
  fallback: entry.fallback
})
