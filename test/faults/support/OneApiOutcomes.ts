/**
 * The messages of a OneAPI fault test against what the OneAPI simulator took (its journal, one
 * `taken` entry per SMS, test/support/OneApiProcess.ts). The client correlator is the message id
 * (docs/operators.md#oneapi-routes): each one taken at most once, and only ones the service
 * created; a message taken ends `delivered` under the id the simulator gave in its 201
 * (`<route>:<id>`), or, when that answer was lost and the message verified by its correlator
 * (409 SVC0005), under `<route>:c:<message id>` after an `unknown`; a message never taken is
 * `failed` or `unknown`, without a provider id. A 409 answered to a send that was not a
 * verification (the message sent again) shows as `<route>:c:` without an `unknown` before it.
 */
import type { TakenSms } from "../../support/OneApiProcess.ts"
import { describeTimeline, type Timeline } from "./Timelines.ts"

/** The SMS the simulator took, by correlator (several: taken twice). */
export const takenByCorrelator = (taken: ReadonlyArray<TakenSms>): ReadonlyMap<string, ReadonlyArray<number>> => {
  const by = new Map<string, Array<number>>()
  for (const t of taken) by.set(t.correlator, [...(by.get(t.correlator) ?? []), t.id])
  return by
}

/** Where a message rests: taken, once delivered; never taken, `failed`, or `unknown` when `mayStayUnknown` says its number never answers. */
export const restsAsTakenBy =
  (taken: ReadonlyMap<string, unknown>, mayStayUnknown: (to: string) => boolean) =>
  (m: Pick<Timeline, "id" | "toNumber" | "status">): boolean =>
    taken.has(m.id)
      ? m.status === "delivered"
      : m.status === "failed" || (m.status === "unknown" && mayStayUnknown(m.toNumber))

/** What is wrong with the messages against what the simulator took, through the route named `route`. */
export const oneApiTakenProblems = (
  timelines: ReadonlyArray<Timeline>,
  taken: ReadonlyMap<string, ReadonlyArray<number>>,
  route: string,
  mayStayUnknown: (to: string) => boolean
): Array<string> => {
  const problems: Array<string> = []
  for (const [correlator, ids] of taken)
    if (ids.length > 1) problems.push(`correlator ${correlator} taken ${ids.length} times: ${ids.join(", ")}`)
  const ids = new Set(timelines.map((m) => m.id))
  for (const correlator of taken.keys())
    if (!ids.has(correlator)) problems.push(`correlator ${correlator} taken, no message of the service`)
  for (const m of timelines) {
    const took = taken.get(m.id)?.[0]
    if (took === undefined) {
      if (!restsAsTakenBy(taken, mayStayUnknown)(m) || m.providerRef !== null)
        problems.push(`never taken by the simulator: ${describeTimeline(m)}`)
      continue
    }
    const byAnswer = m.providerRef === `${route}:${took}`
    const byCorrelator = m.providerRef === `${route}:c:${m.id}` && m.events.some((e) => e.includes(">unknown@"))
    if (m.status !== "delivered" || !(byAnswer || byCorrelator) || m.events.at(-1) !== "accepted>delivered@receipt")
      problems.push(`taken by the simulator as ${took}: ${describeTimeline(m)}`)
  }
  return problems
}
