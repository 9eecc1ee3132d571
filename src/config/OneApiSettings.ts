/**
 * What a `oneapi` entry of the routing file configures (docs/operators.md#oneapi-routes): a
 * provider reached over GSMA OneAPI SMS (HTTP), its OAuth client, the sender address it sends
 * from, and the number prefixes it serves beside the SMPP routes. Decoded by OneApiConfig.ts.
 */
import type { Redacted } from "effect"

export interface OneApiRouteSettings {
  /** Lower-case letters, digits, `-` and `_`: the prefix of every provider ref it gives and of its notify paths. */
  readonly name: string
  /** The API's base, without a trailing `/` (`https://api.orange.com`). */
  readonly baseUrl: string
  /** Where the access token is asked for (client credentials). */
  readonly tokenUrl: string
  readonly clientId: string
  /** Also the key of the notify paths' secret (NotifySecret.ts); never logged or echoed. */
  readonly clientSecret: Redacted.Redacted<string>
  /** `tel:+2610000`: the address messages are sent from. */
  readonly senderAddress: string
  readonly prefixes: ReadonlyArray<string>
  /** Most sends a second from this process; 0 means no cap. */
  readonly mps: number
  /** Whether an unknown send is verified by sending the same request again (the provider never sends twice for one correlator). */
  readonly verifyByCorrelator: boolean
  /** The entry a message goes to when this route provably never took it (docs/operators.md#fallback-routes). */
  readonly fallback: string | undefined
}
