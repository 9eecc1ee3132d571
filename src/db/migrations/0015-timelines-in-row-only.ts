import type { Migration } from "./Migration.ts"

/** Migration 15: timelines written in the message row, settled holds and applied receipts no longer kept. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 15,
  name: "timelines written in the message row, settled holds and applied receipts no longer kept",
  statements: [
    // Every status change now appends its entry to messages.timeline (src/messages/CompactTimeline.ts,
    // the same 9-byte entries as migration 14): the timelines of messages still in flight move
    // there now, entry for entry (from_status is the previous entry's to_status); those of finished
    // messages are collapsed by compaction as before.
    `UPDATE messages AS m SET timeline = p.timeline
    FROM (SELECT e.organisation_id, e.message_id, string_agg((set_byte(decode('00', 'hex'), 0, (array_position(ARRAY['scheduled', 'processing', 'accepted', 'delivered', 'undeliverable', 'blocked', 'failed', 'unknown']::text[], e.to_status) - 1) * 16
          + array_position(ARRAY['admission', 'provider', 'receipt', 'verification', 'recovery', 'dispatch', 'erasure', 'matched_receipt']::text[], e.source) - 1)
        || int8send((extract(epoch FROM e.at) * 1000000)::bigint)), ''::bytea ORDER BY e.id) AS timeline
      FROM message_events AS e JOIN messages AS x ON x.organisation_id = e.organisation_id AND x.id = e.message_id
      WHERE x.timeline IS NULL AND x.status NOT IN ('delivered', 'undeliverable', 'failed', 'blocked')
      GROUP BY e.organisation_id, e.message_id) AS p
    WHERE m.organisation_id = p.organisation_id AND m.id = p.message_id`,
    `DELETE FROM message_events AS e USING messages AS m
    WHERE m.organisation_id = e.organisation_id AND m.id = e.message_id
      AND m.status NOT IN ('delivered', 'undeliverable', 'failed', 'blocked') AND m.timeline IS NOT NULL`,
    // A settled hold is removed by its settlement (its consume or release entry says what it
    // was); an applied receipt is not kept (its message keeps the outcome).
    `DELETE FROM credit_holds WHERE state <> 'pending'`,
    `DELETE FROM provider_receipts WHERE state <> 'pending'`,
    `DROP INDEX provider_receipts_applied`,
    `ALTER TABLE provider_receipts DROP COLUMN organisation_id, DROP COLUMN message_id, DROP COLUMN settled_at`
  ]
}
