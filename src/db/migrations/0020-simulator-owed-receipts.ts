import type { Migration } from "./Migration.ts"

/** Migration 20: the simulator's owed receipts in a table of their own. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 20,
  name: "the simulator's owed receipts in a table of their own",
  statements: [
    // A receipt the simulator owes, until the service's inbox has stored it: the row of what it
    // received is then written once, never updated (its receipt sent left a dead version of it
    // and an index entry behind). At most one row a message (written when its receipt becomes
    // owed, replaced when one is forced); a row whose receipt is being sent is due again at its
    // resend time. The provider ref was `sim:<message id>`: derived, no longer stored.
    `CREATE TABLE simulator_receipts_owed (
      organisation_id uuid NOT NULL,
      message_id uuid NOT NULL,
      due_at timestamptz NOT NULL
    )`,
    `CREATE INDEX simulator_receipts_owed_due ON simulator_receipts_owed (due_at)`,
    `INSERT INTO simulator_receipts_owed (organisation_id, message_id, due_at)
      SELECT organisation_id, message_id, receipt_due_at FROM simulator_messages WHERE receipt_due_at IS NOT NULL`,
    `DROP INDEX simulator_messages_receipt_due`,
    `DROP INDEX simulator_messages_receipted`,
    `ALTER TABLE simulator_messages DROP COLUMN receipt_due_at, DROP COLUMN provider_ref`,
    // the messages whose receipt was owed, by when (those sent a month ago are forgotten)
    `CREATE INDEX simulator_messages_receipted ON simulator_messages (receipt_at) WHERE receipt_at IS NOT NULL`
  ]
}
