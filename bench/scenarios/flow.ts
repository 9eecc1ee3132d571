/**
 * Scenario 8: a steady open-loop flow of messages falling due (`flowRate` per second for
 * `flowDurationS`, seeded ahead with staggered due times, as if admitted earlier), dispatched by
 * the running service to the zero-delay simulator, whose receipts follow at once: how late each
 * message is handed over after its due time, and whether receipts keep up.
 */
import { setTimeout as sleep } from "node:timers/promises"
import type { BenchContext, OrgWithLot } from "../context.ts"
import { query, scalar } from "../psql.ts"
import { round } from "../stats.ts"
import { seed } from "./drain.ts"

export interface FlowFacts {
  readonly rate: number
  readonly durationS: number
  readonly count: number
  /** submitted_at - due_at, seconds. */
  readonly lagP50S: number
  readonly lagP99S: number
  readonly lagMaxS: number
  /** Messages still not handed over 1 s after their due time, at the end. */
  readonly late: number
  /** Receipts the simulator sent more than 2 s before the end that were not applied by then. */
  readonly receiptsUnapplied: number
}

/** Grace after the last message falls due before the end is judged. */
const graceS = 2

export const steadyFlow = async (ctx: BenchContext, org: OrgWithLot): Promise<FlowFacts> => {
  const { flowRate, flowDurationS } = ctx.settings
  const count = flowRate * flowDurationS
  const { due } = await seed(ctx.url, org, count, 3, Math.round(1_000_000 / flowRate))
  await sleep(Math.max(0, Date.parse(due) + flowDurationS * 1000 + graceS * 1000 - Date.now()))
  const [lag] = await query(
    ctx.url,
    `SELECT
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM submitted_at - due_at)),
      percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM submitted_at - due_at)),
      max(extract(epoch FROM submitted_at - due_at)),
      count(*) FILTER (WHERE submitted_at IS NULL AND due_at < now() - interval '1 second')
    FROM messages WHERE organisation_id = '${org.id}'`
  )
  // end to end: the simulator sent the receipt (its receipt_at) more than 2 s ago and the message is still accepted
  const unapplied = await scalar(
    ctx.url,
    `SELECT count(*) FROM messages AS m
    JOIN simulator_messages AS s ON s.organisation_id = m.organisation_id AND s.message_id = m.id
    WHERE m.organisation_id = '${org.id}' AND m.status = 'accepted' AND s.receipt <> 'none'
      AND s.receipt_at < now() - interval '2 seconds'`
  )
  return {
    rate: flowRate,
    durationS: flowDurationS,
    count,
    lagP50S: round(Number(lag![0]), 3),
    lagP99S: round(Number(lag![1]), 3),
    lagMaxS: round(Number(lag![2]), 3),
    late: Number(lag![3]),
    receiptsUnapplied: Number(unapplied)
  }
}
