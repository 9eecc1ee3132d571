/**
 * One route: the bind to one SMSC, kept up (`enquire_link` every 30 s; after a loss, binding again
 * on the reconnection schedule of RetrySchedules.ts; an outage logged once at WARN when it starts
 * and once at INFO when a bind ends it), and the gates every `submit_sm` passes on it: a bound
 * connection (waited for up to the submission's own deadline), the window (at most `window`
 * awaiting their response, fewer under a cap) and the MPS cap (the SMSC never counts more than the
 * route's share of `mps` in a second: SlidingRate.capSplit).
 */
import { type Clock, Deferred, Effect, Fiber, Option, Semaphore } from "effect"
import smpp from "smpp"
import { Pacer } from "../Pacing.ts"
import type { RouteHealth } from "../Provider.ts"
import { type BindGate, openGate } from "./BindSlots.ts"
import { type Answer, type Link, type LinkHandlers, openLink, type Response } from "./Link.ts"
import { reconnectSchedule, stepper } from "./RetrySchedules.ts"
import { capSplit, SlidingRate } from "./SlidingRate.ts"
import type { RouteSettings, SmppTiming } from "../../config/SmppSettings.ts"

/** What a `submit_sm` was sent for, kept with it so that a late answer can be reported. */
export interface PartContext {
  readonly organisationId: string
  readonly messageId: string
  /** From 1. */
  readonly part: number
  readonly parts: number
  /** The normalised SMSC id of part 1, for the parts after it. */
  readonly firstId: string | undefined
}

/** How one `submit_sm` ended for its caller. */
export type PartOutcome =
  | { readonly _tag: "Answered"; readonly status: number; readonly messageId: string | undefined }
  /** Nothing was written before the deadline. */
  | { readonly _tag: "NotWritten"; readonly reason: string }
  /** Written, and no answer came in time or the connection closed before it. */
  | { readonly _tag: "Unknown"; readonly reason: string }

/** What the provider does with what arrives on a route's connection. */
export interface RouteEvents {
  readonly onDeliver: (route: Route, link: Link<PartContext>, pdu: smpp.PDU) => void
  readonly onLateAnswer: (route: Route, late: PartContext, response: Response) => void
  /** The SMSC sent something the link refused or left unanswered. */
  readonly onUnexpected: (route: Route, what: string) => void
}

const unbindTimeoutMs = 1000
/** How often a bound route checks that its bind slot's lease is still safely alive. */
const slotCheckMs = 200

/** One bind's share of the fleet's cap of `mps` shared by `binds` binds (at least 1 when capped). */
export const mpsShare = (mps: number, binds: number): number => (mps === 0 ? 0 : Math.max(1, Math.floor(mps / binds)))

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`

export class Route {
  private link: Link<PartContext> | undefined
  /** Completed when a connection is bound (or the route closes); replaced when it is lost. */
  private bound = Deferred.makeUnsafe<void>()
  private detail: string
  private closing = false
  private concatRef = 0
  private readonly window: Semaphore.Semaphore
  /** Most `submit_sm` awaiting their response: the configured window, or less under a cap (capSplit). */
  private readonly inFlightMax: number
  private readonly rate: SlidingRate | undefined
  /** Dispatched messages' turns, evenly spaced at the route's rate (Pacing.ts). */
  private readonly pacer: Pacer
  /** Submissions a second this route hands over at most (its share of the cap, less its window: capSplit); 0 without a cap. */
  readonly ratePerSecond: number
  private readonly label: string
  private readonly handlers: LinkHandlers<PartContext>
  readonly settings: RouteSettings
  private readonly responseTimeoutMs: number
  private readonly timing: SmppTiming
  private readonly clock: Clock.Clock
  private readonly gate: BindGate

  constructor(
    settings: RouteSettings,
    responseTimeoutMs: number,
    timing: SmppTiming,
    clock: Clock.Clock,
    events: RouteEvents,
    gate: BindGate = openGate(settings.binds)
  ) {
    this.settings = settings
    this.gate = gate
    this.responseTimeoutMs = responseTimeoutMs
    this.timing = timing
    this.clock = clock
    this.label = `${settings.endpoint.host}:${settings.endpoint.port}`
    this.detail = `connecting to ${this.label}`
    const share = mpsShare(settings.mps, settings.binds)
    const split = share > 0 ? capSplit(share, settings.window) : undefined
    this.inFlightMax = split?.inFlight ?? settings.window
    this.window = Semaphore.makeUnsafe(this.inFlightMax)
    this.rate = split === undefined ? undefined : new SlidingRate(split.perSecond)
    this.pacer = new Pacer(clock, split === undefined ? 0 : 1000 / split.perSecond)
    this.ratePerSecond = split?.perSecond ?? 0
    this.handlers = {
      onDeliver: (link, pdu) => events.onDeliver(this, link, pdu),
      onLateAnswer: (late, response) => events.onLateAnswer(this, late, response),
      onUnexpected: (_link, what) => events.onUnexpected(this, what),
      onClosed: (link) => {
        if (this.link !== link) return
        this.link = undefined
        this.bound = Deferred.makeUnsafe<void>()
      }
    }
  }

  get name(): string {
    return this.settings.name
  }

  get prefixes(): ReadonlyArray<string> {
    return this.settings.prefixes
  }

  /** The route's state for /ready and the logs, with the fleet's bind slot this process holds. */
  get health(): RouteHealth {
    return {
      route: this.name,
      connected: this.link?.isOpen === true,
      detail: this.detail,
      slot: { held: this.gate.slot() ?? null, of: this.gate.slots }
    }
  }

  /** Whether this process holds one of the fleet's bind slots of the route (it may bind). */
  get holdsSlot(): boolean {
    return this.gate.slot() !== undefined
  }

  /**
   * Waits for a dispatched message's turn: turns come evenly spaced at the route's share of the
   * cap, so that dispatched messages reach the SMSC evenly rather than a second's worth at once (a
   * burst delayed on the way crowds the next second at the SMSC: bursts of a 50-wide window made
   * the SMSC count 120 in a second under a cap of 100 in the fleet fault test, even spacing 91),
   * and are started only when their submission can follow.
   */
  get pace(): Effect.Effect<void> {
    return this.pacer.pace
  }

  /** A new reference (0 to 255) for the parts of one concatenated message. */
  nextConcatRef(): number {
    this.concatRef = (this.concatRef + 1) & 0xff
    return this.concatRef
  }

  /**
   * Keeps the route bound until the route closes: connect, bind, keep alive; after a loss or a
   * failed attempt, wait as the outage's reconnection schedule says and try again.
   */
  get run(): Effect.Effect<void> {
    const self = this
    return Effect.gen(function* () {
      // the delays of the outage under way, if any: a bind ends it
      let outage: ((nowMs: number, problem: string) => Effect.Effect<number>) | undefined
      while (!self.closing) {
        if (self.gate.slot() === undefined) {
          const slots = self.gate.slots
          self.detail = `standby: the fleet's ${slots === 1 ? "bind is" : `${slots} binds are`} held by other processes`
          yield* self.gate.awaitHeld
          if (self.closing) return
        }
        self.detail = `connecting to ${self.label}`
        const opened = yield* Effect.result(openLink(self.settings.endpoint, self.handlers, self.responseTimeoutMs))
        let problem: string
        if (opened._tag === "Success" && !opened.success.isOpen) {
          // closed between its bind answer and now: onClosed could not forget it, so it is never published
          problem = `connection to ${self.label} lost right after the bind`
        } else if (opened._tag === "Success") {
          const link = opened.success
          self.link = link
          self.detail = `bound to ${self.label} as ${self.settings.endpoint.systemId}`
          Deferred.doneUnsafe(self.bound, Effect.void)
          outage = undefined
          yield* Effect.logInfo("SMPP bound").pipe(Effect.annotateLogs({ route: self.name, detail: self.detail }))
          const keepAlive = yield* Effect.forkChild(self.keepAlive(link))
          const slotWatch = yield* Effect.forkChild(self.watchSlot(link))
          const reason = yield* link.awaitClosed
          yield* Fiber.interrupt(keepAlive)
          yield* Fiber.interrupt(slotWatch)
          if (self.closing) return
          problem = `connection to ${self.label} lost (${reason})`
        } else {
          problem = opened.failure
        }
        const starts = outage === undefined
        outage ??= yield* stepper(reconnectSchedule(self.timing))
        const delayMs = yield* outage(self.clock.currentTimeMillisUnsafe(), problem)
        self.detail = `${problem}; retrying in ${seconds(delayMs)}`
        // an outage is news once: the attempts after its first failure are logged at DEBUG only
        yield* (starts ? Effect.logWarning : Effect.logDebug)("SMPP route not bound").pipe(
          Effect.annotateLogs({ route: self.name, detail: self.detail })
        )
        yield* Effect.sleep(delayMs)
      }
    })
  }

  /**
   * Stops the route: waiting submissions give up, the connection unbinds (requests still waiting
   * end Unknown), then its bind slot is given up for another process.
   */
  get close(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.closing = true
      this.detail = "closed"
      Deferred.doneUnsafe(this.bound, Effect.void)
      return this.link === undefined ? Effect.void : this.link.unbind(unbindTimeoutMs)
    }).pipe(Effect.andThen(this.gate.close))
  }

  /** A bound connection, waited for up to the deadline; else why not. */
  awaitBound(deadlineMs: number): Effect.Effect<Link<PartContext> | string> {
    const self = this
    return Effect.gen(function* () {
      while (true) {
        if (self.closing) return `${self.name}: shutting down`
        const link = self.link
        if (link?.isOpen === true) return link
        const nowMs = self.clock.currentTimeMillisUnsafe()
        const woke =
          nowMs >= deadlineMs
            ? Option.none()
            : yield* Deferred.await(self.bound).pipe(Effect.timeoutOption(deadlineMs - nowMs))
        if (Option.isNone(woke)) return `${self.name}: not bound before the deadline (${self.detail})`
      }
    })
  }
  /**
   * Sends one `submit_sm` through the gates (bound connection, window, MPS cap) and waits for its
   * answer, all before `deadlineMs`. Never written twice: a write whose answer does not come in
   * time is Unknown, and `context` keeps it matched for a late answer.
   */
  submit(fields: smpp.PduOptions, context: PartContext, deadlineMs: number): Effect.Effect<PartOutcome> {
    const self = this
    return Effect.gen(function* () {
      while (true) {
        const link = yield* self.awaitBound(deadlineMs)
        if (typeof link === "string") return { _tag: "NotWritten", reason: link } as const
        const permit = yield* self.window
          .take(1)
          .pipe(Effect.timeoutOption(Math.max(0, deadlineMs - self.clock.currentTimeMillisUnsafe())))
        if (Option.isNone(permit)) {
          return {
            _tag: "NotWritten",
            reason: `${self.name}: its window of ${self.inFlightMax} stayed full until the deadline`
          } as const
        }
        const outcome = yield* self
          .write(link, fields, context, deadlineMs)
          .pipe(Effect.ensuring(self.window.release(1)))
        if (outcome !== "again") return outcome
      }
    })
  }

  /** One write on `link`, after the MPS cap allows it; "again" when the link closed or the cap slot was taken meanwhile. */
  private write(
    link: Link<PartContext>,
    fields: smpp.PduOptions,
    context: PartContext,
    deadlineMs: number
  ): Effect.Effect<PartOutcome | "again"> {
    const self = this
    return Effect.gen(function* () {
      const rate = self.rate
      const waitMs = rate?.waitMs(self.clock.currentTimeMillisUnsafe()) ?? 0
      if (self.clock.currentTimeMillisUnsafe() + waitMs >= deadlineMs) {
        return {
          _tag: "NotWritten",
          reason: `${self.name}: its cap of ${self.settings.mps} submit_sm per second held it until the deadline`
        } as const
      }
      if (waitMs > 0) yield* Effect.sleep(waitMs)
      const gate = rate === undefined ? undefined : () => rate.tryTake(self.clock.currentTimeMillisUnsafe())
      const answer: Option.Option<Answer> = yield* link
        .request(new smpp.PDU("submit_sm", fields), context, gate)
        .pipe(Effect.timeoutOption(Math.max(0, deadlineMs - self.clock.currentTimeMillisUnsafe())))
      if (Option.isNone(answer))
        return {
          _tag: "Unknown",
          reason: `${self.name}: no submit_sm_resp within ${self.responseTimeoutMs} ms`
        } as const
      switch (answer.value._tag) {
        case "NotWritten":
          return "again"
        case "Lost":
          return {
            _tag: "Unknown",
            reason: `${self.name}: connection lost after the write (${answer.value.reason})`
          } as const
        case "Answered":
          return { _tag: "Answered", status: answer.value.status, messageId: answer.value.messageId } as const
      }
    })
  }

  /** Sends a request that is not a submission (`query_sm`) on the bound connection and waits for its answer until the deadline. */
  request(pdu: smpp.PDU, deadlineMs: number): Effect.Effect<Option.Option<Answer>> {
    const self = this
    return Effect.gen(function* () {
      const link = yield* self.awaitBound(deadlineMs)
      if (typeof link === "string") return Option.none()
      return yield* link
        .request(pdu, undefined)
        .pipe(Effect.timeoutOption(Math.max(0, deadlineMs - self.clock.currentTimeMillisUnsafe())))
    })
  }

  /**
   * Drops the bind as soon as this process may no longer hold its slot (its lease not renewed in
   * time): another process may take the slot once the lease runs out, and must find it unbound.
   */
  private watchSlot(link: Link<PartContext>): Effect.Effect<void> {
    const self = this
    return Effect.gen(function* () {
      while (self.gate.slot() !== undefined) yield* Effect.sleep(slotCheckMs)
      yield* Effect.logWarning("SMPP bind dropped: its bind slot was not renewed in time").pipe(
        Effect.annotateLogs({ route: self.name })
      )
      link.destroy("its bind slot was not renewed in time")
    })
  }

  /** `enquire_link` every interval; a connection that does not answer one in time is closed (and so rebound). */
  private keepAlive(link: Link<PartContext>): Effect.Effect<void> {
    const probe = Effect.suspend(() => link.request(new smpp.PDU("enquire_link"), undefined)).pipe(
      Effect.timeoutOption(this.responseTimeoutMs),
      Effect.flatMap((answer) =>
        Option.isSome(answer) && answer.value._tag === "Answered"
          ? Effect.void
          : Effect.sync(() => link.destroy(`no enquire_link_resp within ${this.responseTimeoutMs} ms`))
      )
    )
    return Effect.sleep(this.timing.enquireLinkIntervalMs).pipe(Effect.andThen(probe), Effect.forever)
  }
}
