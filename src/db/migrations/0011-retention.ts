import type { Migration } from "./Migration.ts"

/** Migration 11: retention and compaction: an organisation's own period, the finished messages erased, what they no longer need removed. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 11,
  name: "retention and compaction: an organisation's own period, the finished messages erased, what they no longer need removed",
  statements: [
    // null: the service's default (SMS_RETENTION_DAYS); no value at all keeps messages for ever
    `ALTER TABLE organisations ADD COLUMN retention_days integer CHECK (retention_days >= 1)`,
    // retention finds, per organisation, the oldest finished messages not yet erased (a message
    // final since updated_at: nothing moves a final message but its erasure, which this skips)
    `CREATE INDEX messages_erasable ON messages (organisation_id, updated_at)
      WHERE erased_at IS NULL AND status IN ('delivered', 'undeliverable', 'failed', 'blocked')`,
    // erasure forgets the answer stored for the message's key: found by the message, not the key
    `CREATE INDEX idempotency_keys_message ON idempotency_keys (organisation_id, message_id) WHERE message_id IS NOT NULL`,
    // compaction removes the receipts applied, and the simulator's messages receipted, a day ago
    `CREATE INDEX provider_receipts_applied ON provider_receipts (settled_at) WHERE state = 'applied'`,
    `CREATE INDEX simulator_messages_receipted ON simulator_messages (receipt_at) WHERE receipt_due_at IS NULL`
  ]
}
