/**
 * The messages of an SMPP fault test against what the SMSC simulator took (its journal): each
 * number taken at most once, every message taken delivered under the id the SMSC gave it (by
 * the answer, or by its receipt when the answer was lost), the others never `delivered`; and no
 * receipt left matched to nothing.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { KnownMessage } from "../../../simulator/smsc/Entries.ts"
import { withDatabase } from "./Outcomes.ts"
import { describeTimeline, type Timeline, went } from "./Timelines.ts"

/** The messages the simulator took, by number. */
export const takenByNumber = (taken: ReadonlyArray<KnownMessage>): ReadonlyMap<string, ReadonlyArray<KnownMessage>> => {
  const by = new Map<string, Array<KnownMessage>>()
  for (const m of taken) by.set(m.to, [...(by.get(m.to) ?? []), m])
  return by
}

/** Where a message rests: taken, once delivered; never taken, `unknown` (its fate not known) or `failed` (it provably never left). */
export const restsAsTaken =
  (taken: ReadonlyMap<string, unknown>) =>
  (m: Timeline): boolean =>
    taken.has(m.toNumber) ? m.status === "delivered" : m.status === "unknown" || m.status === "failed"

/** What is wrong with the messages against what the simulator took. */
export const takenProblems = (
  timelines: ReadonlyArray<Timeline>,
  taken: ReadonlyMap<string, ReadonlyArray<KnownMessage>>
): Array<string> => {
  const problems: Array<string> = []
  for (const [to, messages] of taken)
    if (messages.length > 1) problems.push(`${to} taken ${messages.length} times by the SMSC`)
  const numbers = new Set(timelines.map((m) => m.toNumber))
  for (const to of taken.keys())
    if (!numbers.has(to)) problems.push(`${to} taken by the SMSC, no message of the service`)
  for (const m of timelines) {
    const took = taken.get(m.toNumber)?.[0]
    if (took === undefined) {
      if (!restsAsTaken(taken)(m) || m.providerRef !== null)
        problems.push(`never taken by the SMSC: ${describeTimeline(m)}`)
      continue
    }
    const path = went(m, "processing>accepted@provider") || went(m, "unknown>accepted@matched_receipt")
    if (
      m.status !== "delivered" ||
      !path ||
      m.providerRef !== `smsc:${took.ids[0]}` ||
      m.events.at(-1) !== "accepted>delivered@receipt"
    ) {
      problems.push(`taken by the SMSC as ${took.ids[0]}: ${describeTimeline(m)}`)
    }
  }
  return problems
}

/** Receipts stored and still matched to no message. */
export const pendingReceipts = (url: string): Promise<number> =>
  withDatabase(
    url,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{
        n: number
      }>`SELECT count(*)::integer AS n FROM provider_receipts WHERE state = 'pending'`
      return row!.n
    })
  )
