/**
 * After a fault: every key sent is replayed identically until its answer is definite, and the
 * replays are judged against what was answered before and against the database: the answers
 * each kind of creation may give, the same answer for a key answered before, one message per
 * message key and a batch's recipients per batch key (nothing created twice, nothing without
 * its key).
 */
import type { Served } from "../../support/ServedProcess.ts"
import {
  codeOf,
  drive,
  isDefinite,
  type Operation,
  replayUntilDefinite,
  resourceOf,
  type Result
} from "./Operations.ts"
import type { MessageFact } from "./Outcomes.ts"

/** The answers (`status` or `status code`) each kind of creation may give, the database answering. */
const allowedAnswers: Record<Operation["kind"], ReadonlyArray<string>> = {
  immediate: ["201", "502 provider_rejected", "502 provider_result_unknown", "503 dispatch_unavailable"],
  scheduled: ["202"],
  batch: ["202"],
  contact: ["200", "201"]
}

const answerOf = (r: Result): string =>
  r.status !== undefined && r.status >= 400 ? `${r.status} ${r.body?.error?.code}` : String(r.status)

const describe = (r: Result): string => `${r.op.kind} ${r.op.key}: ${r.status ?? r.closed} ${JSON.stringify(r.body)}`

/** Definite answers that are not among those their kind may give. */
export const unexpectedAnswers = (results: ReadonlyArray<Result>): Array<string> =>
  results.filter((r) => isDefinite(r) && !allowedAnswers[r.op.kind].includes(answerOf(r))).map(describe)

/** Replays each operation (as the integrator holding its key) until definite or `deadline`; returns the last answer of each. */
export const replayEvery = async (
  served: Served,
  sent: ReadonlyArray<{ readonly op: Operation; readonly apiKey: string }>,
  deadline: number
): Promise<Array<Result>> => {
  const replays: Array<Result> = []
  await drive({
    count: sent.length,
    make: (i) => sent[i]!.op,
    send: (op, i) => replayUntilDefinite(served, sent[i]!.apiKey, op, deadline),
    clients: 16,
    results: replays
  })
  return replays
}

/**
 * What is wrong with the replays: a key left without a definite answer, an answer its kind may
 * not give (but a schedule never admitted and replayed after its time: 400 invalid_schedule, as
 * for a new request), or, for a key answered definitely before, a different answer (a creation replays
 * its first answer, marked replayed; a contact's upsert updates the same contact).
 */
export const replayProblems = (before: ReadonlyArray<Result>, replays: ReadonlyArray<Result>): Array<string> => {
  const replayOf = new Map(replays.map((r) => [r.op.key, r]))
  const answeredBefore = new Set(before.filter(isDefinite).map((r) => r.op.key))
  // a schedule never admitted, replayed once its time has passed, is refused as it would be new
  const lateSchedule = (r: Result) => codeOf(r) === "invalid_schedule" && !answeredBefore.has(r.op.key)
  const problems = [
    ...replays.filter((r) => !isDefinite(r)).map((r) => `no definite answer: ${describe(r)}`),
    ...unexpectedAnswers(replays.filter((r) => !lateSchedule(r)))
  ]
  for (const first of before.filter(isDefinite)) {
    const again = replayOf.get(first.op.key)
    if (again === undefined) {
      problems.push(`not replayed: ${describe(first)}`)
      continue
    }
    const same =
      first.op.kind === "contact"
        ? again.status === 200 && JSON.stringify(again.body) === JSON.stringify(first.body)
        : again.status === first.status && again.replayed && JSON.stringify(again.body) === JSON.stringify(first.body)
    if (!same) problems.push(`answered ${describe(first)}, replayed ${describe(again)}`)
  }
  return problems
}

/** Creations whose messages in the database are not exactly one per message key and a batch's recipients per batch key. */
export const creationProblems = (
  replays: ReadonlyArray<Result>,
  messages: ReadonlyArray<MessageFact>
): Array<string> => {
  const expected = new Map<string, number>()
  for (const r of replays) {
    const id = resourceOf(r)
    if (id === undefined || r.op.kind === "contact") continue
    expected.set(id, r.op.kind === "batch" ? (r.op.body.recipients as ReadonlyArray<string>).length : 1)
  }
  const found = new Map<string, number>()
  for (const m of messages) found.set(m.batchId ?? m.id, (found.get(m.batchId ?? m.id) ?? 0) + 1)
  const problems: Array<string> = []
  for (const [id, n] of found)
    if (expected.get(id) !== n)
      problems.push(`${id}: ${n} messages in the database, ${expected.get(id) ?? 0} by the answers`)
  for (const [id, n] of expected)
    if (!found.has(id)) problems.push(`${id}: no message in the database, ${n} by the answers`)
  return problems
}
