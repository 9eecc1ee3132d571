import type { Migration } from "./Migration.ts"

/** Migration 3: message batches. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 3,
  name: "message batches",
  statements: [
    `CREATE TABLE message_batches (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      id uuid NOT NULL,
      recipient_count integer NOT NULL CHECK (recipient_count BETWEEN 1 AND 1000),
      credits_reserved integer NOT NULL CHECK (credits_reserved >= 1),
      send_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, id)
    )`,
    `CREATE UNIQUE INDEX messages_batch_position ON messages (organisation_id, batch_id, batch_position)
      WHERE batch_id IS NOT NULL`
  ]
}
