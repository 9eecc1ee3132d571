/**
 * The SMPP adapter against the SMSC simulator, in-process on a free port: a fake in-memory
 * ProviderInbox, the provider layer run for the length of a test body, logs captured as JSON
 * lines, and a bounded poll instead of sleeps.
 */
import { Effect, Layer, Logger, Redacted } from "effect"
import {
  type IncomingPart,
  type IncomingReceipt,
  InboxUnavailable,
  type LateResult,
  Provider,
  ProviderInbox
} from "../../../src/provider/Provider.ts"
import { smppProviderLayer } from "../../../src/provider/smpp/SmppProvider.ts"
import type { RouteSettings, SmppSettings } from "../../../src/config/SmppSettings.ts"
import { Smsc, type SmscOptions } from "../../../simulator/smsc/Smsc.ts"

/** An inbox that keeps what it is told, and can be made unavailable. */
export class FakeInbox {
  readonly receipts: Array<IncomingReceipt> = []
  readonly lateResults: Array<LateResult> = []
  readonly parts: Array<IncomingPart> = []
  /** Mobile-originated parts refused (InboxUnavailable) before it accepts them again. */
  refuseParts = 0
  /** Receipt calls refused (InboxUnavailable) before it accepts them again. */
  refuseReceipts = 0
  refusedReceipts = 0

  private readonly receive = (receipt: IncomingReceipt) =>
    Effect.suspend(() => {
      if (this.refuseReceipts > 0) {
        this.refuseReceipts--
        this.refusedReceipts++
        return Effect.fail(new InboxUnavailable({ cause: "database down (test)" }))
      }
      this.receipts.push(receipt)
      return Effect.void
    })

  readonly layer = Layer.succeed(
    ProviderInbox,
    ProviderInbox.of({
      receipt: this.receive,
      receipts: (receipts) =>
        Effect.forEach(receipts, (r) =>
          this.receive(r).pipe(
            Effect.as(true),
            Effect.orElseSucceed(() => false)
          )
        ),
      lateResult: (result) => Effect.sync(() => void this.lateResults.push(result)),
      mobileOriginated: (part) =>
        Effect.suspend(() => {
          if (this.refuseParts > 0) {
            this.refuseParts--
            return Effect.fail(new InboxUnavailable({ cause: "database down (test)" }))
          }
          this.parts.push(part)
          return Effect.void
        })
    })
  )
}

/** Fast timings for tests: a short deadline, quick reconnections and throttle retries. */
export const testSettings = (
  routes: ReadonlyArray<RouteSettings>,
  overrides: Partial<SmppSettings> = {}
): SmppSettings => ({
  routes,
  responseTimeoutMs: 1500,
  timing: {
    enquireLinkIntervalMs: 30_000,
    reconnectInitialMs: 50,
    reconnectMaxMs: 400,
    throttleInitialMs: 20,
    throttleMaxMs: 200
  },
  ...overrides
})

/** A route to a simulator (its default credentials unless given). */
export const routeTo = (smsc: Smsc, overrides: Partial<RouteSettings> = {}): RouteSettings => ({
  name: "smsc",
  endpoint: { host: "127.0.0.1", port: smsc.port, systemId: "sim", password: Redacted.make("sim") },
  prefixes: ["*"],
  window: 10,
  mps: 0,
  binds: 1,
  msgIdType: "exact",
  ...overrides
})

/** A simulator on a free port with quick answers and receipts. */
export const startSmsc = (options: Partial<SmscOptions> = {}): Promise<Smsc> =>
  Smsc.start({ port: 0, receiptDelayMs: 50, slowMs: 300, lateMs: 2500, receiptRetryMs: 200, ...options })

/** Runs `body` with the SMPP provider over `settings`, logs going to `logs`; the provider (its binds) closes after. */
export const withProvider = <A>(
  settings: SmppSettings,
  inbox: FakeInbox,
  body: (provider: typeof Provider.Service) => Effect.Effect<A>,
  logs: Array<string> = []
): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* body(yield* Provider)
    }).pipe(
      Effect.provide(smppProviderLayer(settings).pipe(Layer.provide(inbox.layer))),
      Effect.provide(Logger.layer([Logger.map(Logger.formatJson, (line) => void logs.push(line))]))
    )
  )

/** Waits until `check` holds, polling every 10 ms, failing after `timeoutMs`. */
export const until = (what: string, check: () => boolean, timeoutMs = 5000): Effect.Effect<void> =>
  Effect.gen(function* () {
    const start = performance.now()
    while (!check()) {
      if (performance.now() - start > timeoutMs) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(10)
    }
  })

let sequence = 0

/** A submission to `to` with a fresh message id. */
export const submission = (to: string, text = "Salama!", senderName = "DEMO") => ({
  organisationId: "org-1",
  messageId: `msg-${++sequence}`,
  to,
  senderName,
  text,
  segments: 1
})
