import type { Migration } from "./Migration.ts"

/** Migration 14: a finished message's timeline collapsed into its row. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 14,
  name: "a finished message's timeline collapsed into its row",
  statements: [
    // A day after a message became final, compaction moves its message_events rows here, 9 bytes
    // an entry (src/messages/CompactTimeline.ts). Null: not collapsed yet (every message of an
    // upgraded database, collapsed by compaction in its sets like any other).
    `ALTER TABLE messages ADD COLUMN timeline bytea`,
    // compaction finds the finished messages not collapsed yet, oldest first; a collapsed one leaves the index
    `CREATE INDEX messages_timeline_due ON messages (updated_at)
      WHERE timeline IS NULL AND status IN ('delivered', 'undeliverable', 'failed', 'blocked')`
  ]
}
