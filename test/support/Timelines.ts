/**
 * Every timeline entry of every message as rows, for the tests that read timelines in SQL: the
 * entries kept in the message row (src/messages/CompactTimeline.ts), `from_status` being the
 * previous entry's `to_status`, then any rows of an upgraded database's `message_events`.
 * Columns: `organisation_id, message_id, part, position, from_status, to_status, source, at`;
 * order a message's entries by `part, position`.
 */
import { unpackedEntries } from "../../src/messages/CompactTimeline.ts"

export const timelineEntriesSql = `SELECT m.organisation_id, m.id AS message_id, 0 AS part, c.n AS position,
    lag(c.to_status) OVER (PARTITION BY m.organisation_id, m.id ORDER BY c.n) AS from_status, c.to_status, c.source, c.at
  FROM messages AS m CROSS JOIN LATERAL (${unpackedEntries("m.timeline")}) AS c
  UNION ALL
  SELECT organisation_id, message_id, 1, id, from_status, to_status, source, at FROM message_events`
