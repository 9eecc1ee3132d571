/**
 * The access token of one OneAPI route (docs/operators.md#oneapi-routes): asked for with the
 * client credentials (HTTP Basic, `grant_type=client_credentials`), kept until 60 s before it
 * expires, per process; one request at a time, shared by every send waiting for it. A send
 * answered 401 renews it once (`renew`): sends that saw the same stale token share that renewal.
 */
import { Redacted } from "effect"
import type { OneApiRouteSettings } from "../../config/OneApiSettings.ts"

/** How long before its announced expiry a token is no longer used. */
export const tokenMarginMs = 60_000

export type TokenOutcome =
  | { readonly _tag: "Token"; readonly value: string; readonly expiresAtMs: number }
  /** None was given: nothing can be sent (the send is Unreachable). */
  | { readonly _tag: "Refused"; readonly reason: string }

export class TokenSource {
  private current: { readonly value: string; readonly expiresAtMs: number } | undefined
  private inflight: Promise<TokenOutcome> | undefined
  /** How many token requests were made (tests, health). */
  fetches = 0
  /** The last refusal, until a token is obtained again. */
  lastRefusal: string | undefined
  private readonly settings: OneApiRouteSettings
  private readonly now: () => number
  private readonly timeoutMs: number

  constructor(settings: OneApiRouteSettings, now: () => number, timeoutMs: number) {
    this.settings = settings
    this.now = now
    this.timeoutMs = timeoutMs
  }

  /** The token in hand, if still valid: its expiry. */
  get validUntilMs(): number | undefined {
    const t = this.current
    return t !== undefined && this.now() < t.expiresAtMs - tokenMarginMs ? t.expiresAtMs : undefined
  }

  /** When the last token obtained expires (or expired); undefined before the first. */
  get lastExpiryMs(): number | undefined {
    return this.current?.expiresAtMs
  }

  /** The token kept, while still valid; undefined when one must be asked for (`token`). */
  get held(): TokenOutcome | undefined {
    const t = this.current
    return t !== undefined && this.now() < t.expiresAtMs - tokenMarginMs ? { _tag: "Token", ...t } : undefined
  }

  /** A valid token: the one kept, or the one being asked for, or a new request. */
  token(): Promise<TokenOutcome> {
    const t = this.current
    if (t !== undefined && this.now() < t.expiresAtMs - tokenMarginMs) return Promise.resolve({ _tag: "Token", ...t })
    this.inflight ??= this.request().finally(() => {
      this.inflight = undefined
    })
    return this.inflight
  }

  /** A token other than `stale` (refused by a 401): the kept one is dropped if it is still `stale`. */
  renew(stale: string): Promise<TokenOutcome> {
    if (this.current?.value === stale) this.current = undefined
    return this.token()
  }

  private async request(): Promise<TokenOutcome> {
    this.fetches++
    const outcome = await this.ask()
    if (outcome._tag === "Token") {
      this.current = { value: outcome.value, expiresAtMs: outcome.expiresAtMs }
      this.lastRefusal = undefined
    } else this.lastRefusal = outcome.reason
    return outcome
  }

  private async ask(): Promise<TokenOutcome> {
    const { clientId, clientSecret, tokenUrl } = this.settings
    const basic = Buffer.from(`${clientId}:${Redacted.value(clientSecret)}`).toString("base64")
    const asked = this.now()
    let response: Response
    let text: string
    try {
      response = await fetch(tokenUrl, {
        method: "POST",
        headers: {
          authorization: `Basic ${basic}`,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json"
        },
        body: "grant_type=client_credentials",
        signal: AbortSignal.timeout(this.timeoutMs)
      })
      text = await response.text()
    } catch (e) {
      return { _tag: "Refused", reason: `token request failed: ${failureCode(e)}` }
    }
    if (response.status !== 200) return { _tag: "Refused", reason: `token refused: ${response.status}` }
    const body = parseJson(text)
    const value = body?.access_token
    const expiresIn = Number(body?.expires_in)
    if (typeof value !== "string" || value === "" || !Number.isFinite(expiresIn) || expiresIn <= 0)
      return { _tag: "Refused", reason: "token answer unreadable" }
    return { _tag: "Token", value, expiresAtMs: asked + expiresIn * 1000 }
  }
}

/** A JSON object, or undefined. */
export const parseJson = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/** The code of a fetch failure (`ECONNREFUSED`, `TimeoutError`), from its cause when it has one. */
export const failureCode = (e: unknown): string => {
  const cause = typeof e === "object" && e !== null && "cause" in e ? (e as { cause: unknown }).cause : undefined
  const code =
    typeof cause === "object" && cause !== null && "code" in cause
      ? String((cause as { code: unknown }).code)
      : undefined
  if (code !== undefined) return code
  if (e instanceof Error) return e.name === "Error" || e.name === "TypeError" ? e.message : e.name
  return String(e)
}
