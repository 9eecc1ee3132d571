/**
 * The verdict of the SMPP fuzz on the messages: what each must end in and by which path, given
 * what the hostile SMSC did with its number, and the answer its immediate send must have had.
 */
import { codeOf, type Exchange } from "../support/Operations.ts"
import { describeTimeline, type Timeline, went } from "../support/Timelines.ts"
import type { HostileSmsc, Submit } from "./HostileSmsc.ts"

/** An immediate send and its answer. */
export interface Send extends Exchange {
  readonly to: string
}

/** Whether the answer to this submit went out on a connection a killer dropped (it may never have been read). */
const lost = (smsc: HostileSmsc, s: Submit) => smsc.killed.has(s.connection)

/**
 * The statuses a message to `to` may end in: as its receipt says when taken under a usable id;
 * `failed` when refused (or `unknown` if the refusal was lost); `unknown` when given an unusable
 * id or never read by the SMSC (its write lost with a dropped connection).
 */
export const expectedStatuses = (smsc: HostileSmsc, to: string): ReadonlyArray<string> => {
  const s = smsc.submits.get(to)?.[0]
  if (s === undefined) return ["unknown"]
  if (s.answer === "accepted") return [s.stat === "DELIVRD" ? "delivered" : "undeliverable"]
  if (s.answer === "refused") return lost(smsc, s) ? ["failed", "unknown"] : ["failed"]
  return ["unknown"]
}

/** Immediate sends whose answer is not the one their message's path gives (a 500 or no answer never is). */
export const sendProblems = (sends: ReadonlyArray<Send>, timelines: ReadonlyArray<Timeline>): Array<string> => {
  const byNumber = new Map(timelines.map((m) => [m.toNumber, m]))
  return sends.flatMap((s) => {
    const m = byNumber.get(s.to)
    const answer = s.status === undefined ? `closed: ${s.closed}` : `${s.status} ${codeOf(s) ?? ""}`.trim()
    const expected =
      m === undefined
        ? "a message"
        : went(m, "processing>accepted@provider")
          ? "201"
          : went(m, "processing>failed@provider")
            ? "502 provider_rejected"
            : went(m, "processing>unknown@provider")
              ? "502 provider_result_unknown"
              : "a path from the provider"
    return answer === expected
      ? []
      : [`${s.to}: answered ${answer}, its path gives ${expected}${m === undefined ? "" : `: ${describeTimeline(m)}`}`]
  })
}

/**
 * Messages off their normal path: submitted more than once; taken under a usable id but not
 * ended as its receipt says under that id (through `processing>accepted@provider`, or through
 * `unknown>accepted@matched_receipt` where the answer went out on a dropped connection); refused
 * but not `failed`; given an unusable id or never read but not `unknown` without a provider id.
 */
export const pathProblems = (smsc: HostileSmsc, timelines: ReadonlyArray<Timeline>): Array<string> =>
  timelines.flatMap((m): Array<string> => {
    const submits = smsc.submits.get(m.toNumber) ?? []
    const s = submits[0]
    const problems = submits.length > 1 ? [`submitted ${submits.length} times`] : []
    const last = m.events.at(-1)
    if (s === undefined || s.answer === "unusable id") {
      if (m.providerRef !== null || last !== "processing>unknown@provider") {
        problems.push(
          s === undefined
            ? "never read by the SMSC"
            : `given the unusable id ${JSON.stringify(s.messageId.slice(0, 70))}`
        )
      }
    } else if (s.answer === "refused") {
      if (last !== "processing>failed@provider" && !(lost(smsc, s) && last === "processing>unknown@provider"))
        problems.push("refused")
    } else {
      const taken =
        went(m, "processing>accepted@provider") || (lost(smsc, s) && went(m, "unknown>accepted@matched_receipt"))
      if (!taken || m.providerRef !== `smsc:${s.messageId}` || last !== `accepted>${m.status}@receipt`) {
        problems.push(
          `taken as ${s.messageId.slice(0, 70)} (answer ${lost(smsc, s) ? "lost" : "sent"}), receipt ${s.stat}`
        )
      }
    }
    const expected = expectedStatuses(smsc, m.toNumber)
    if (!expected.includes(m.status)) problems.push(`ends ${m.status}, not ${expected.join(" or ")}`)
    return problems.length === 0 ? [] : [`${describeTimeline(m)}: ${problems.join("; ")}`]
  })
