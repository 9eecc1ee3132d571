/**
 * The simulator test numbers' table (docs/decisions.md#the-provider-simulator), written once for
 * the tests that run it through a provider: each number's immediate answer, final status, the
 * timeline after `processing`, and the credits it leaves. Every provider the service can send
 * through (the in-process simulator, the SMSC simulator, the OneAPI simulator) must meet it.
 */
import { testNumbers } from "../../src/provider/inprocess/Simulator.ts"
import { credits, type MessageCredits } from "./smpp/service.ts"

export interface Row {
  readonly to: string
  /** The immediate send's answer: status, and the error code when it is not 201. */
  readonly answer: readonly [number, string?]
  readonly final: string
  /** The timeline after `processing`. */
  readonly tail: ReadonlyArray<string>
  readonly credits: MessageCredits
}

const accepted = "processing>accepted@provider"

export const table: ReadonlyArray<Row> = [
  {
    to: testNumbers.delivered,
    answer: [201],
    final: "delivered",
    tail: [accepted, "accepted>delivered@receipt"],
    credits: credits.consumed
  },
  {
    to: testNumbers.undeliverable,
    answer: [201],
    final: "undeliverable",
    tail: [accepted, "accepted>undeliverable@receipt"],
    credits: credits.consumed
  },
  {
    to: testNumbers.rejected,
    answer: [502, "provider_rejected"],
    final: "failed",
    tail: ["processing>failed@provider"],
    credits: credits.released
  },
  {
    to: testNumbers.unknownThenAccepted,
    answer: [502, "provider_result_unknown"],
    final: "delivered",
    tail: ["processing>unknown@provider", "unknown>accepted@verification", "accepted>delivered@receipt"],
    credits: credits.consumed
  },
  {
    to: testNumbers.unreachable,
    answer: [503, "dispatch_unavailable"],
    final: "failed",
    tail: ["processing>failed@provider"],
    credits: credits.released
  },
  { to: testNumbers.acceptedNoReceipt, answer: [201], final: "accepted", tail: [accepted], credits: credits.consumed },
  {
    to: testNumbers.slow,
    answer: [201],
    final: "delivered",
    tail: [accepted, "accepted>delivered@receipt"],
    credits: credits.consumed
  },
  {
    to: testNumbers.unknownNeverReceived,
    answer: [502, "provider_result_unknown"],
    final: "failed",
    tail: ["processing>unknown@provider", "unknown>failed@verification"],
    credits: credits.released
  },
  {
    to: testNumbers.unknownForGood,
    answer: [502, "provider_result_unknown"],
    final: "unknown",
    tail: ["processing>unknown@provider"],
    credits: credits.reserved
  }
]

export const rowOf: ReadonlyMap<string, Row> = new Map(table.map((r) => [r.to, r]))
