/**
 * Erased messages, packed (`erased_messages`, migration 18), owned with `messages` by this module.
 * Once a month is over and retention has erased every message whose id it made, its messages are
 * moved into packs and its partition of `messages` is dropped (MessagePartitions.ts): what an
 * erased message still answers (status, segments, send and delivery times, erasure and creation
 * times, its timeline, its batch and position) kept for up to `packMembersMax` messages of one
 * organisation a row, one array per field. A pack is a run of the organisation's messages in id
 * order within one month, all of one batch or all of none, so that the ids of one organisation's
 * packs never overlap: the pack of an id is the first one whose last id is not below it.
 *
 * The readers of MessageStore read `messages` and the packs together: the fragments here give a
 * packed member with the columns a row of `messages` gives (`messageColumns`), recipient, sender
 * and text empty, as erasure leaves them.
 */
import type { SqlClient } from "effect/sql"
import type { MessageStatus } from "../domain/MessageStatus.ts"
import { statusCode, statusOfCode } from "./CompactTimeline.ts"

/** Most messages in one pack. */
export const packMembersMax = 256

/** The members of the pack `p` (an alias of erased_messages), as a lateral source `e`. */
const membersOf = `CROSS JOIN LATERAL unnest(p.ids, p.positions, p.statuses, p.segments, p.send_ats, p.delivery_times, p.erased_ats,
    p.created_ats, p.timelines)
  AS e(id, batch_position, status_code, segments, send_at, delivery_time, erased_at, created_at, timeline)`

/** A member `e` of the pack `p` with the columns of `messageColumns()`. */
const memberColumns = `p.organisation_id::text AS organisation_id, e.id::text AS id, p.batch_id::text AS batch_id,
  ''::text AS to_number, ''::text AS sender_name, ''::text AS text, e.segments::integer AS segments,
  ${statusOfCode("e.status_code")} AS status, e.send_at, e.delivery_time, e.erased_at`

/** The bit of a status in `statuses_held`. */
const statusBit = (status: MessageStatus) => `(1 << ${statusCode(`'${status}'`)})`

export const packedFragments = (sql: SqlClient.SqlClient) => {
  const members = sql.literal(membersOf)
  const columns = sql.literal(memberColumns)

  /** The pack of the organisation that may hold `id` (at most one), as `p`. */
  const packOf = (organisationId: string, id: string) =>
    sql`(SELECT * FROM erased_messages WHERE organisation_id = ${organisationId} AND last_id >= ${id}::uuid
      ORDER BY last_id LIMIT 1) AS p`

  return {
    /** The packed message `id` of the organisation, with `messageColumns()` (no row when it is not packed). */
    find: (organisationId: string, id: string) =>
      sql`SELECT ${columns} FROM ${packOf(organisationId, id)} ${members} WHERE e.id = ${id}::uuid`,

    /** The packed message `id` whatever its organisation, with `messageColumns()`. */
    findAnywhere: (id: string) =>
      sql`SELECT ${columns} FROM erased_messages AS p ${members}
        WHERE sms_uuid_range(p.first_id, p.last_id, '[]') @> ${id}::uuid AND e.id = ${id}::uuid`,

    /** The timeline bytes of the packed message `id` of the organisation, as `timeline`. */
    timeline: (organisationId: string, id: string) =>
      sql`SELECT e.timeline FROM ${packOf(organisationId, id)} ${members} WHERE e.id = ${id}::uuid`,

    /** The packed members of a batch after `afterPosition`, in position order, at most `limit`, with `messageColumns()` and `batch_position`. */
    ofBatch: (organisationId: string, batchId: string, afterPosition: number, limit: number) =>
      sql`SELECT ${columns}, e.batch_position FROM erased_messages AS p ${members}
        WHERE p.organisation_id = ${organisationId} AND p.batch_id = ${batchId} AND e.batch_position > ${afterPosition}
        ORDER BY e.batch_position LIMIT ${limit}`,

    /** `batch_id, status, n`: the packed members of these batches counted by status. */
    countsOfBatches: (organisationId: string, batchIds: ReadonlyArray<string>) =>
      sql`SELECT p.batch_id, ${sql.literal(statusOfCode("s.code"))} AS status, count(*) AS n
        FROM erased_messages AS p CROSS JOIN LATERAL unnest(p.statuses) AS s(code)
        WHERE p.organisation_id = ${organisationId} AND p.batch_id = ANY(${batchIds}::uuid[]) GROUP BY 1, 2`,

    /** `status, n`: every packed message counted by status. */
    statusCounts: sql`SELECT ${sql.literal(statusOfCode("s.code"))} AS status, count(*) AS n
      FROM erased_messages AS p CROSS JOIN LATERAL unnest(p.statuses) AS s(code) GROUP BY 1`,

    /**
     * The organisation's packed messages that may be among the `n` newest (in id order) before
     * the id `before`, in `status` when given, with `messageColumns()` and `created_at`: the
     * members of its last packs, newest first, until they hold `n` messages of the page for sure
     * (the packs do not overlap: a pack's members are all newer than those of the packs after it).
     */
    newestFirst: (organisationId: string, n: number, before: string | undefined, status: MessageStatus | undefined) => {
      const held = status === undefined ? sql`` : sql`AND p.statuses_held & ${sql.literal(statusBit(status))} <> 0`
      // members of the page a pack holds for sure: all of them, or one (its first, when the cursor
      // cuts it, or when a status is asked: it holds one of that status at least)
      const sure =
        status !== undefined
          ? sql`1`
          : before === undefined
            ? sql`p.members`
            : sql`CASE WHEN p.last_id >= ${before}::uuid THEN 1 ELSE p.members END`
      return sql`SELECT ${columns}, e.created_at FROM (
          SELECT p.*, sum(p.sure) OVER (ORDER BY p.last_id DESC) - p.sure AS ahead FROM (
            SELECT p.*, ${sure} AS sure FROM erased_messages AS p
            WHERE p.organisation_id = ${organisationId} ${held} ${before === undefined ? sql`` : sql`AND p.first_id < ${before}::uuid`}
            ORDER BY p.last_id DESC LIMIT ${n}) AS p) AS p
        ${members}
        WHERE p.ahead < ${n}
          ${before === undefined ? sql`` : sql`AND e.id < ${before}::uuid`}
          ${status === undefined ? sql`` : sql`AND ${sql.literal(statusOfCode("e.status_code"))} = ${status}`}`
    },

    /**
     * Packs up to `chunk` erased messages of the partition `partition` (all of its messages
     * erased), its first ones by organisation and id, and removes them from it, in one statement;
     * returns how many it packed. Runs start where the organisation or the batch changes; a run
     * longer than `packMembersMax` makes several packs.
     */
    pack: (partition: string, chunk: number, at: Date) =>
      sql<{ packed: number; packs: number }>`WITH chunk AS (
          SELECT organisation_id, id, batch_id, batch_position, status, segments, send_at, delivery_time, erased_at, created_at, timeline
          FROM ${sql(partition)} WHERE erased_at IS NOT NULL AND timeline IS NOT NULL
          ORDER BY organisation_id, id LIMIT ${chunk}
          FOR UPDATE),
        starts AS (
          SELECT c.*, CASE WHEN lag(c.id) OVER w IS NULL OR c.batch_id IS DISTINCT FROM lag(c.batch_id) OVER w THEN 1 ELSE 0 END AS starts
          FROM chunk AS c WINDOW w AS (PARTITION BY c.organisation_id ORDER BY c.id)),
        runs AS (SELECT s.*, sum(s.starts) OVER (PARTITION BY s.organisation_id ORDER BY s.id) AS run FROM starts AS s),
        coded AS (
          SELECT r.*, ${sql.literal(statusCode("r.status"))} AS code,
            (row_number() OVER (PARTITION BY r.organisation_id, r.run ORDER BY r.id) - 1) / ${packMembersMax} AS part
          FROM runs AS r),
        packs AS (
          INSERT INTO erased_messages (organisation_id, first_id, last_id, batch_id, members, statuses_held,
            ids, positions, statuses, segments, send_ats, delivery_times, erased_ats, created_ats, timelines, packed_at)
          SELECT organisation_id, (array_agg(id ORDER BY id))[1], (array_agg(id ORDER BY id DESC))[1], batch_id, count(*),
            bit_or(1 << code), array_agg(id ORDER BY id),
            CASE WHEN batch_id IS NULL THEN NULL ELSE array_agg(batch_position ORDER BY id) END,
            array_agg(code ORDER BY id), array_agg(segments ORDER BY id), array_agg(send_at ORDER BY id),
            array_agg(delivery_time ORDER BY id), array_agg(erased_at ORDER BY id), array_agg(created_at ORDER BY id),
            array_agg(timeline ORDER BY id), ${at}
          FROM coded GROUP BY organisation_id, run, part, batch_id
          RETURNING 1),
        gone AS (
          DELETE FROM ${sql(partition)} AS m USING chunk AS c
          WHERE m.organisation_id = c.organisation_id AND m.id = c.id
          RETURNING 1)
        SELECT (SELECT count(*) FROM gone)::integer AS packed, (SELECT count(*) FROM packs)::integer AS packs`
  }
}
