/**
 * The deterministic provider simulator (contract section 5): the outcome depends on the
 * recipient alone. Time goes through Effect's Clock, so tests drive it with TestClock.
 */
import { Clock, Duration, Effect, FiberSet, Layer, Queue, Stream } from "effect"
import { Provider, type ProviderStatus, type Receipt, type SubmitResult, type Submission } from "../src/dispatch/Provider.ts"

export interface SimulatorOptions {
  /** Delay between acceptance and the delivery receipt. */
  readonly receiptDelayMs: number
  /** Acceptance delay of the slow test number. */
  readonly slowMs: number
}

/** The test numbers and what each does. Any other number is accepted, then delivered. */
export const testNumbers = {
  delivered: "+261340000001",
  undeliverable: "+261340000002",
  rejected: "+261340000003",
  unknownThenAccepted: "+261340000004",
  unreachable: "+261340000005",
  acceptedNoReceipt: "+261340000006",
  slow: "+261340000007",
  unknownNeverReceived: "+261340000008",
  unknownForGood: "+261340000009"
} as const

type Behaviour = {
  readonly submit: "accept" | "reject" | "unknown" | "unreachable"
  readonly receipt: "delivered" | "undeliverable" | "none"
  readonly status: ProviderStatus
  readonly slow?: true
}

const behaviourOf = (to: string): Behaviour => {
  switch (to) {
    case testNumbers.undeliverable: return { submit: "accept", receipt: "undeliverable", status: "accepted" }
    case testNumbers.rejected: return { submit: "reject", receipt: "none", status: "not_received" }
    case testNumbers.unknownThenAccepted: return { submit: "unknown", receipt: "delivered", status: "accepted" }
    case testNumbers.unreachable: return { submit: "unreachable", receipt: "none", status: "not_received" }
    case testNumbers.acceptedNoReceipt: return { submit: "accept", receipt: "none", status: "accepted" }
    case testNumbers.slow: return { submit: "accept", receipt: "delivered", status: "accepted", slow: true }
    case testNumbers.unknownNeverReceived: return { submit: "unknown", receipt: "none", status: "not_received" }
    case testNumbers.unknownForGood: return { submit: "unknown", receipt: "none", status: "unknown" }
    default: return { submit: "accept", receipt: "delivered", status: "accepted" }
  }
}

/** How many received message ids the simulator remembers for status queries. */
const receivedMax = 200_000

export const SimulatorLive = (options: SimulatorOptions) =>
  Layer.effect(Provider, Effect.gen(function*() {
    const receipts = yield* Queue.unbounded<Receipt>()
    const timers = yield* FiberSet.make()
    // messages whose receipt is already scheduled: a status query must not schedule a second one
    const receiptScheduled = new Set<string>()
    // messages that reached the simulated provider: a status query about any other one (a crash
    // before the call) truthfully answers "not received". Bounded, oldest forgotten first.
    const received = new Set<string>()
    const remember = (id: string) => {
      received.add(id)
      if (received.size > receivedMax) received.delete(received.values().next().value!)
    }

    const scheduleReceipt = (s: Submission, outcome: Behaviour["receipt"]) =>
      outcome === "none" || receiptScheduled.has(s.messageId)
        ? Effect.void
        : Effect.sync(() => receiptScheduled.add(s.messageId)).pipe(
          Effect.andThen(Effect.sleep(Duration.millis(options.receiptDelayMs))),
          Effect.andThen(Clock.currentTimeMillis),
          Effect.flatMap((ms) =>
            Queue.offer(receipts, { organisationId: s.organisationId, messageId: s.messageId, outcome, at: new Date(ms) })),
          Effect.ensuring(Effect.sync(() => receiptScheduled.delete(s.messageId))),
          FiberSet.run(timers),
          Effect.asVoid
        )

    const submit = (s: Submission): Effect.Effect<SubmitResult> => {
      const b = behaviourOf(s.to)
      const answer: Effect.Effect<SubmitResult> = Effect.gen(function*() {
        if (b.submit !== "unreachable") remember(s.messageId)
        switch (b.submit) {
          case "reject": return { _tag: "Rejected", reason: "rejected by the provider (simulated)" } as const
          case "unreachable": return { _tag: "Unreachable" } as const
          case "unknown": return { _tag: "Unknown" } as const
          case "accept":
            yield* scheduleReceipt(s, b.receipt)
            return { _tag: "Accepted", providerMessageId: `sim-${s.messageId}` } as const
        }
      })
      return b.slow ? Effect.sleep(Duration.millis(options.slowMs)).pipe(Effect.andThen(answer)) : answer
    }

    const status = (s: Submission): Effect.Effect<ProviderStatus> => {
      const b = behaviourOf(s.to)
      if (!received.has(s.messageId)) return Effect.succeed("not_received")
      // an unknown-then-accepted message gets its receipt once the provider has confirmed it
      return b.status === "accepted" && b.submit === "unknown"
        ? scheduleReceipt(s, b.receipt).pipe(Effect.as(b.status))
        : Effect.succeed(b.status)
    }

    return Provider.of({ submit, status, receipts: Stream.fromQueue(receipts) })
  }))
