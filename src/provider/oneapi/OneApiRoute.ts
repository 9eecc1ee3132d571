/**
 * One OneAPI route (docs/operators.md#oneapi-routes, docs/decisions.md#oneapi): sends over HTTP
 * to its provider under its token (Token.ts), paced and capped at its `mps` as SMPP routes are
 * (Pacing.ts, SlidingRate.ts), each answer mapped by Results.ts. On PostgreSQL one process of the
 * fleet at a time sends for it, the one holding its slot (smpp/BindSlots.ts, one slot): its cap
 * and its token are the fleet's. A request is sent again only
 * when it provably was not taken: after a 401 (once, with a new token), a 429, or a connection
 * refused or a name not found before anything was written; every other failure is Unknown.
 */
import { type Clock, Effect, Option } from "effect"
import type { OneApiRouteSettings } from "../../config/OneApiSettings.ts"
import type { SmppTiming } from "../../config/SmppSettings.ts"
import { maskPhone } from "../../domain/Phone.ts"
import { Pacer } from "../Pacing.ts"
import type { Query, QueryResult, RouteHealth, Submission, SubmitResult } from "../Provider.ts"
import { type BindGate, openGate } from "../smpp/BindSlots.ts"
import { stepper, throttleSchedule } from "../smpp/RetrySchedules.ts"
import { SlidingRate } from "../smpp/SlidingRate.ts"
import { notifySecret } from "./NotifySecret.ts"
import { type SendOutcome, sendOutcome } from "./Results.ts"
import { postRequest, requestBody } from "./Requests.ts"
import { type TokenOutcome, TokenSource } from "./Token.ts"

/** Longest Retry-After honoured; a longer one is waited as this (the deadline still decides). */
export const retryAfterCapMs = 60_000

/** What one request (with its 401 renewal) came to. */
type Exchange =
  | SendOutcome
  /** No connection was made: nothing was written, it may be tried again. */
  | { readonly _tag: "NotWritten"; readonly reason: string }
  /** No token, a second 401, or the cap or the deadline held it: nothing was taken, and trying again would not help. */
  | { readonly _tag: "NotSent"; readonly reason: string }

export class OneApiRoute {
  readonly settings: OneApiRouteSettings
  private readonly tokens: TokenSource
  private readonly pacer: Pacer
  private readonly rate: SlidingRate | undefined
  /** Sends a second at most (the route's `mps`); 0 without a cap. */
  readonly ratePerSecond: number
  private readonly clock: Clock.Clock
  private readonly responseTimeoutMs: number
  private readonly timing: SmppTiming
  private readonly notifyUrl: string
  private readonly requestsUrl: string
  /** The last send's transport failure, until a send gets an answer. */
  private transportFailure: string | undefined
  /** Whether this process is the fleet's sender for the route (its slot). */
  readonly gate: BindGate

  constructor(
    settings: OneApiRouteSettings,
    responseTimeoutMs: number,
    timing: SmppTiming,
    clock: Clock.Clock,
    publicUrl: string,
    gate: BindGate = openGate(1)
  ) {
    this.settings = settings
    this.gate = gate
    this.clock = clock
    this.responseTimeoutMs = responseTimeoutMs
    this.timing = timing
    this.tokens = new TokenSource(settings, () => clock.currentTimeMillisUnsafe(), responseTimeoutMs)
    this.rate = settings.mps > 0 ? new SlidingRate(settings.mps) : undefined
    this.pacer = new Pacer(clock, settings.mps > 0 ? 1000 / settings.mps : 0)
    this.ratePerSecond = settings.mps
    this.notifyUrl = `${publicUrl}/providers/${settings.name}/receipts/${notifySecret(settings.name, settings.clientSecret)}`
    this.requestsUrl = `${settings.baseUrl}/smsmessaging/v1/outbound/${encodeURIComponent(settings.senderAddress)}/requests`
  }

  get name(): string {
    return this.settings.name
  }

  get prefixes(): ReadonlyArray<string> {
    return this.settings.prefixes
  }

  /** Whether this process sends for the route now (it holds the fleet's slot). */
  get holdsSlot(): boolean {
    return this.gate.slot() !== undefined
  }

  /** How many token requests this route made. */
  get tokenFetches(): number {
    return this.tokens.fetches
  }

  /**
   * Connected once a token was obtained (the last token request was not refused) and the last
   * send did not fail for transport. A token that merely expired while nothing was sent keeps it
   * connected: the next send asks for a new one.
   */
  get health(): RouteHealth {
    const until = this.tokens.validUntilMs
    const last = this.tokens.lastExpiryMs
    const refused = this.tokens.lastRefusal
    const detail =
      refused !== undefined
        ? refused
        : until !== undefined
          ? `token valid until ${new Date(until).toISOString()}`
          : last !== undefined
            ? `token expired at ${new Date(last).toISOString()}; a new one at the next send`
            : "no token yet"
    const slot = { held: this.gate.slot() ?? null, of: this.gate.slots }
    if (slot.held === null)
      return { route: this.name, connected: false, detail: "standby: another process of the fleet sends for it", slot }
    return {
      route: this.name,
      connected: last !== undefined && refused === undefined && this.transportFailure === undefined,
      detail: this.transportFailure === undefined ? detail : `${detail}; last send failed: ${this.transportFailure}`,
      slot
    }
  }

  /** Asks for a token at start when this process sends for the route, so that /ready says whether the account works before the first send. */
  get warmUp(): Effect.Effect<void> {
    return this.holdsSlot ? Effect.promise(() => this.tokens.token()).pipe(Effect.asVoid) : Effect.void
  }

  /** Waits for a dispatched message's turn at the route's rate. */
  get pace(): Effect.Effect<void> {
    return this.pacer.pace
  }

  /** A token, waited for until the deadline (the request for it goes on, for the sends after). */
  private token(renewing: string | undefined, deadlineMs: number): Effect.Effect<TokenOutcome> {
    // the token in hand, at once: no promise and no timer for each send
    const held = renewing === undefined ? this.tokens.held : undefined
    if (held !== undefined) return Effect.succeed(held)
    return Effect.promise(() => (renewing === undefined ? this.tokens.token() : this.tokens.renew(renewing))).pipe(
      Effect.timeoutOption(Math.max(0, deadlineMs - this.clock.currentTimeMillisUnsafe())),
      Effect.map(
        Option.getOrElse(
          (): TokenOutcome => ({ _tag: "Refused", reason: "no token before the deadline (the token request is slow)" })
        )
      )
    )
  }

  /** One request of `s` (renewing the token once on a 401), mapped. */
  private exchange(s: Submission, deadlineMs: number): Effect.Effect<Exchange> {
    const self = this
    return Effect.gen(function* () {
      let stale: string | undefined
      for (let tries = 0; ; tries++) {
        // another process sends for the route: nothing is written from here
        if (!self.holdsSlot)
          return { _tag: "NotSent", reason: `${self.name}: another process of the fleet sends for it` } as const
        const token = yield* self.token(stale, deadlineMs)
        if (token._tag === "Refused") return { _tag: "NotSent", reason: `${self.name}: ${token.reason}` } as const
        // the cap is taken right before the request: the provider counts requests as they arrive
        if (!(yield* self.capped(deadlineMs)))
          return {
            _tag: "NotSent",
            reason: `${self.name}: its cap of ${self.settings.mps} a second held it until the deadline`
          } as const
        // a request that could not wait for its answer is not made: nothing written is not unknown
        if (self.clock.currentTimeMillisUnsafe() >= deadlineMs)
          return { _tag: "NotSent", reason: `${self.name}: no time left before the deadline` } as const
        const attempt = yield* postRequest({
          route: self.name,
          url: self.requestsUrl,
          token: token.value,
          body: requestBody(s, self.settings.senderAddress, self.notifyUrl),
          timeoutMs: Math.max(1, deadlineMs - self.clock.currentTimeMillisUnsafe()),
          responseTimeoutMs: self.responseTimeoutMs
        })
        if (attempt._tag === "NotWritten") {
          self.transportFailure = attempt.reason
          return attempt
        }
        if (attempt._tag === "Lost") {
          self.transportFailure = attempt.reason
          return { _tag: "Unknown", reason: attempt.reason } as const
        }
        self.transportFailure = undefined
        const outcome = sendOutcome(self.name, s.messageId, attempt.answer, self.clock.currentTimeMillisUnsafe())
        if (outcome._tag !== "Unauthorized") return outcome
        // a 401 means nothing was taken: with a new token too, the account is refused
        if (tries > 0) return { _tag: "NotSent", reason: `${self.name}: answered 401 with a new token` } as const
        stale = token.value
      }
    })
  }

  /** Waits for the cap to allow a send before the deadline; false when it cannot. */
  private capped(deadlineMs: number): Effect.Effect<boolean> {
    const self = this
    return Effect.gen(function* () {
      const rate = self.rate
      if (rate === undefined) return true
      while (true) {
        const nowMs = self.clock.currentTimeMillisUnsafe()
        const waitMs = rate.waitMs(nowMs)
        if (nowMs + waitMs >= deadlineMs) return false
        if (waitMs === 0 && rate.tryTake(nowMs)) return true
        yield* Effect.sleep(Math.max(1, waitMs))
      }
    })
  }

  /** Sends `s`, answering before `deadlineMs`. */
  submit(s: Submission, deadlineMs: number): Effect.Effect<SubmitResult> {
    const self = this
    return Effect.gen(function* () {
      const backoff = yield* stepper(throttleSchedule(self.timing))
      while (true) {
        const outcome = yield* self.exchange(s, deadlineMs)
        if (outcome._tag === "Accepted" || outcome._tag === "Rejected" || outcome._tag === "Unknown") return outcome
        if (outcome._tag === "Unauthorized") return { _tag: "Unknown", reason: `${self.name}: answered 401` } as const
        if (outcome._tag === "NotSent") return { _tag: "Unreachable", reason: outcome.reason } as const
        const nowMs = self.clock.currentTimeMillisUnsafe()
        const scheduled = yield* backoff(nowMs, 0)
        const delayMs =
          outcome._tag === "Throttled" && outcome.retryAfterMs !== undefined
            ? Math.min(outcome.retryAfterMs, retryAfterCapMs)
            : scheduled
        // sent again only with a quarter of the deadline left for its answer, as SMPP does
        if (nowMs + delayMs + self.responseTimeoutMs / 4 > deadlineMs) {
          const why = outcome._tag === "Throttled" ? "throttled it (429)" : `unreachable (${outcome.reason})`
          return {
            _tag: "Unreachable",
            reason: `${self.name} ${why} until the response deadline for ${maskPhone(s.to)}`
          } as const
        }
        yield* Effect.sleep(delayMs)
      }
    })
  }

  /**
   * What the provider knows of a message whose send was unknown: with `verify_by_correlator`, the
   * same request again (the provider never sends twice for one correlator); else nothing.
   */
  query(q: Query, deadlineMs: number): Effect.Effect<QueryResult> {
    const self = this
    return Effect.gen(function* () {
      if (!self.settings.verifyByCorrelator) return { _tag: "Unknown" } as const
      const outcome = yield* self.exchange(q, deadlineMs)
      if (outcome._tag === "Accepted") return outcome
      if (outcome._tag === "Rejected") return { _tag: "NotReceived", reason: outcome.reason } as const
      return { _tag: "Unknown" } as const
    })
  }
}
