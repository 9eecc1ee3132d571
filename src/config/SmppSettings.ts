/**
 * What the SMPP adapter is configured with: the SMSCs it binds to, the number prefixes each
 * serves, and its timings. Decoded from the environment by SmppConfig.ts.
 */
import type { Redacted } from "effect"
import type { OneApiRouteSettings } from "./OneApiSettings.ts"

/**
 * How an SMSC writes its message ids: the same in `submit_sm_resp` and in receipts (`exact`), or
 * hexadecimal in one and decimal in the other.
 */
export type MsgIdType = "exact" | "hex_resp_dec_receipt" | "dec_resp_hex_receipt"

/** Most binds one SMSC entry may allow the fleet. */
export const maxBinds = 100

export const msgIdTypes: ReadonlyArray<MsgIdType> = ["exact", "hex_resp_dec_receipt", "dec_resp_hex_receipt"]

/** Where an SMSC listens and the account the adapter binds with. */
export interface SmscEndpoint {
  readonly host: string
  readonly port: number
  readonly systemId: string
  readonly password: Redacted.Redacted<string>
}

/**
 * One SMSC and the numbers it serves; a process keeps one bind (`bind_transceiver`) to it while
 * it holds one of its `binds` slots (BindSlots.ts).
 */
export interface RouteSettings {
  /** Lower-case letters, digits, `-` and `_`: the prefix of every provider ref it gives (`telma:1234`). */
  readonly name: string
  readonly endpoint: SmscEndpoint
  /** `+26134`-like number prefixes; `*` matches every number. The longest match wins. */
  readonly prefixes: ReadonlyArray<string>
  /** Most `submit_sm` awaiting their response on the connection. */
  readonly window: number
  /**
   * Most `submit_sm` in any 1 s window, for the whole fleet (every process on one database); 0
   * means no cap. Each of the `binds` connections applies its share, `mps / binds`.
   */
  readonly mps: number
  /** Most binds to this SMSC held at once by all the service processes on one database together (1 to 100). */
  readonly binds: number
  readonly msgIdType: MsgIdType
  /** The entry a message goes to when this SMSC provably never took it (docs/operators.md#fallback-routes). */
  readonly fallback?: string | undefined
}

/** Delays the adapter works with; the defaults suit real SMSCs, tests shorten them. */
export interface SmppTiming {
  readonly enquireLinkIntervalMs: number
  /** First reconnection delay; it doubles at each failed attempt, jittered, up to `reconnectMaxMs`. */
  readonly reconnectInitialMs: number
  readonly reconnectMaxMs: number
  /** First wait after a throttled `submit_sm` (0x58, 0x14); it doubles, jittered, up to `throttleMaxMs`. */
  readonly throttleInitialMs: number
  readonly throttleMaxMs: number
}

export interface SmppSettings {
  /** The SMSCs (SMPP routes). */
  readonly routes: ReadonlyArray<RouteSettings>
  /** The routes of the routing file's `oneapi` entries (docs/operators.md#oneapi-routes); none when absent. */
  readonly oneapi?: ReadonlyArray<OneApiRouteSettings>
  /** Longest a submission waits for its `submit_sm_resp` (and, before the write, for a bind): the provider's submit deadline. */
  readonly responseTimeoutMs: number
  readonly timing: SmppTiming
}

export const defaultTiming: SmppTiming = {
  enquireLinkIntervalMs: 30_000,
  reconnectInitialMs: 500,
  reconnectMaxMs: 30_000,
  throttleInitialMs: 100,
  throttleMaxMs: 2_000
}

/** The route name of the single SMSC given by SMS_SMPP_URL. */
export const singleRouteName = "smsc"
