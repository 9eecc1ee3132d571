/**
 * Each message of the database with its provider id and its timeline, for the SMPP fault tests,
 * which judge a message by the path it took (`processing>unknown@provider
 * unknown>accepted@matched_receipt accepted>delivered@receipt`) rather than by a simulator's count.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { withDatabase } from "./Outcomes.ts"
import { timelineEntriesSql } from "../../support/Timelines.ts"

export interface Timeline {
  readonly organisationId: string
  readonly id: string
  readonly toNumber: string
  readonly status: string
  /** `<route>:<id>`, or null when the provider's id is not known. */
  readonly providerRef: string | null
  /** Its events, oldest first, each `from>to@source` (`>processing@admission` for the first). */
  readonly events: ReadonlyArray<string>
}

/** Every message of the organisations given, with its timeline. */
export const readTimelines = (url: string, organisationIds: ReadonlyArray<string>): Promise<ReadonlyArray<Timeline>> =>
  withDatabase(
    url,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<
        Omit<Timeline, "events"> & { readonly timeline: string }
      >`SELECT m.organisation_id::text, m.id::text,
        m.to_number, m.status, m.provider_message_id AS provider_ref,
        coalesce(string_agg(coalesce(e.from_status, '') || '>' || e.to_status || '@' || e.source, ' ' ORDER BY e.part, e.position), '') AS timeline
      FROM messages AS m
      LEFT JOIN (${sql.literal(timelineEntriesSql)}) AS e ON e.organisation_id = m.organisation_id AND e.message_id = m.id
      WHERE m.organisation_id = ANY(${organisationIds}::uuid[])
      GROUP BY m.organisation_id, m.id`
      return rows.map(({ timeline, ...m }) => ({ ...m, events: timeline === "" ? [] : timeline.split(" ") }))
    })
  )

/** Whether its timeline holds this step (`unknown>accepted@matched_receipt`). */
export const went = (m: Timeline, step: string): boolean => m.events.includes(step)

/** One line for a failure message: id, number, status, provider id and path. */
export const describeTimeline = (m: Timeline): string =>
  `${m.id} ${m.toNumber} ${m.status} ${m.providerRef ?? "-"} [${m.events.join(" ")}]`

/**
 * Reads the timelines until there are at least `count` messages and `settled` holds for each, or
 * `timeoutMs` passes; returns the last read either way, for the checks to name what is wrong.
 */
export const timelinesWhen = async (
  url: string,
  organisationIds: ReadonlyArray<string>,
  count: number,
  settled: (m: Timeline) => boolean,
  timeoutMs: number
): Promise<ReadonlyArray<Timeline>> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const all = await readTimelines(url, organisationIds)
    if ((all.length >= count && all.every(settled)) || Date.now() > deadline) return all
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}
