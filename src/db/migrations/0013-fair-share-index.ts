import type { Migration } from "./Migration.ts"

/** Migration 13: due messages by organisation, for the fair-share claim; immediate sends handed over, first. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 13,
  name: "due messages by organisation, for the fair-share claim; immediate sends handed over, first",
  statements: [
    // the claim walks the organisations holding scheduled messages and takes each one's earliest
    // due messages (MessageQueueStore.claimDue)
    `CREATE INDEX messages_due_by_organisation ON messages (organisation_id, due_at, created_at, batch_position)
      WHERE status = 'scheduled'`,
    // immediate sends handed over to the holders of their route's bind come first (BindHolderRelay.ts)
    `CREATE INDEX messages_handed_over ON messages (due_at) WHERE status = 'scheduled' AND send_at IS NULL`
  ]
}
