/**
 * What the failover tests check once the new primary serves (docs/failover.md), each returning
 * the list of what is wrong (empty when all holds) so that a failure names the keys, messages
 * and numbers concerned: every creation acknowledged (201 or 202) found in the database with its
 * reservation, every destination the SMSC took taken once and named by a message of the
 * database. With the replays (Replay.ts) and the ledger (Outcomes.ts) they make the checker; its
 * negative control (asynchronous replication, a standby cut off) shows that they find lost writes.
 */
import type { KnownMessage } from "../../../simulator/smsc/Entries.ts"
import type { Exchange } from "./Operations.ts"
import { resourceOf, type Result } from "./Operations.ts"
import type { MessageFact } from "./Outcomes.ts"

const isAcknowledged = (r: Result): boolean => r.status === 201 || r.status === 202

const holdsItsReservation = (m: MessageFact): boolean => m.pending + m.posted + m.voided === m.segments

const describeResult = (r: Result): string => `${r.op.kind} ${r.op.key} (${r.status} ${resourceOf(r)})`

/**
 * Creations answered 201 or 202 whose messages the database lacks, or holds to other numbers, or
 * without their reservation (their segments, held, consumed or released, in the ledger).
 */
export const acknowledgedProblems = (
  results: ReadonlyArray<Result>,
  messages: ReadonlyArray<MessageFact>
): Array<string> => {
  const byId = new Map(messages.map((m) => [m.id, m]))
  const byBatch = new Map<string, Array<MessageFact>>()
  for (const m of messages) if (m.batchId !== null) byBatch.set(m.batchId, [...(byBatch.get(m.batchId) ?? []), m])
  const problems: Array<string> = []
  for (const r of results.filter(isAcknowledged)) {
    const id = resourceOf(r)
    if (id === undefined) {
      problems.push(`${describeResult(r)}: no id in the answer`)
      continue
    }
    const expected: ReadonlyArray<string> =
      r.op.kind === "batch" ? (r.op.body.recipients as ReadonlyArray<string>) : [r.op.body.to as string]
    const found = r.op.kind === "batch" ? (byBatch.get(id) ?? []) : [byId.get(id)].filter((m) => m !== undefined)
    if (found.length === 0) {
      problems.push(`${describeResult(r)}: lost, not in the database`)
      continue
    }
    const numbers = found.map((m) => m.toNumber).sort()
    if (JSON.stringify(numbers) !== JSON.stringify([...expected].sort()))
      problems.push(`${describeResult(r)}: its messages go to ${numbers.join(", ")}`)
    for (const m of found.filter((m) => !holdsItsReservation(m))) {
      problems.push(
        `${describeResult(r)}: message ${m.id} (${m.segments} segments) holds ${JSON.stringify({ pending: m.pending, posted: m.posted, voided: m.voided })}`
      )
    }
  }
  return problems
}

/**
 * Destinations of the run (`ofRun`) that the SMSC took more than once (a message submitted
 * twice), or that it took while no message of the database goes to them (a write lost after
 * its message was submitted).
 */
export const submissionProblems = (
  taken: ReadonlyArray<KnownMessage>,
  messages: ReadonlyArray<MessageFact>,
  ofRun: (to: string) => boolean
): Array<string> => {
  const times = new Map<string, number>()
  for (const m of taken.filter((t) => ofRun(t.to))) times.set(m.to, (times.get(m.to) ?? 0) + 1)
  const named = new Set(messages.map((m) => m.toNumber))
  return [
    ...[...times].filter(([, n]) => n > 1).map(([to, n]) => `${to} submitted ${n} times`),
    ...[...times.keys()]
      .filter((to) => !named.has(to))
      .map((to) => `${to} submitted, but no message of the database goes to it`)
  ]
}

/** Exchanges answered 500. */
export const answered500 = (
  exchanges: ReadonlyArray<Exchange & { readonly path?: string; readonly op?: { readonly key: string } }>
): Array<string> =>
  exchanges.filter((e) => e.status === 500).map((e) => `${e.path ?? e.op?.key}: 500 ${JSON.stringify(e.body)}`)

/** How many answers of each status (`closed` for none) among `exchanges`. */
export const byStatus = (exchanges: ReadonlyArray<Exchange>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const e of exchanges) {
    const status = e.status === undefined ? "closed" : String(e.status)
    counts[status] = (counts[status] ?? 0) + 1
  }
  return counts
}

/** When the first creation was answered 2xx at or after `at` (epoch ms), if one was. */
export const firstWriteAfter = (results: ReadonlyArray<Result>, at: number): number | undefined =>
  results
    .filter((r) => r.status !== undefined && r.status < 300 && r.answeredAt >= at)
    .reduce<number | undefined>(
      (first, r) => (first === undefined || r.answeredAt < first ? r.answeredAt : first),
      undefined
    )
