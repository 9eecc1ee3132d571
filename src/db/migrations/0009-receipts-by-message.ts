import type { Migration } from "./Migration.ts"

/** Migration 9: receipts matched per message: by provider id and number, the newest accepted first. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 9,
  name: "receipts matched per message: by provider id and number, the newest accepted first",
  statements: [
    // An SMSC that restarts gives ids again: a receipt is no longer one per (provider ref,
    // outcome) but one per delivery report, matched to the newest accepted message with its id
    // and its number; repeats are told per message when applied.
    `ALTER TABLE provider_receipts DROP CONSTRAINT provider_receipts_provider_ref_outcome_key`,
    `ALTER TABLE provider_receipts ADD COLUMN recipient text`,
    `ALTER TABLE provider_receipts ADD COLUMN submitted_at timestamptz`,
    `CREATE INDEX provider_receipts_ref ON provider_receipts (provider_ref) WHERE state = 'pending'`,
    // unmatched receipts of a number, for the verification of a message left unknown without
    // the provider's id (its receipt tells it was taken)
    `CREATE INDEX provider_receipts_orphans ON provider_receipts (recipient, submitted_at)
      WHERE state = 'pending' AND recipient IS NOT NULL`,
    // messages of a number still waiting for an outcome: a receipt that finds no accepted
    // message waits while one of them may still take it
    `CREATE INDEX messages_in_flight_to ON messages (to_number) WHERE status IN ('processing', 'unknown')`,
    `ALTER TABLE message_events DROP CONSTRAINT message_events_source_check`,
    `ALTER TABLE message_events ADD CONSTRAINT message_events_source_check CHECK (source IN ('admission', 'provider',
      'receipt', 'verification', 'recovery', 'dispatch', 'erasure', 'matched_receipt'))`
  ]
}
