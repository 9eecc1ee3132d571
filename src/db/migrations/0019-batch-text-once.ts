import type { Migration } from "./Migration.ts"

/** Migration 19: a batch's text stored once; the operator's lookup by id without an index of its own. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 19,
  name: "a batch's text stored once; the operator's lookup by id without an index of its own",
  statements: [
    // The text of a batch's members, once (a batch has one text): the members' rows hold none
    // (null), so every version a status change writes of them is that much smaller. Removed
    // once every member is erased (MessageStore.erase). Members admitted before keep their own.
    `CREATE TABLE message_texts (
      organisation_id uuid NOT NULL,
      batch_id uuid NOT NULL,
      text text NOT NULL,
      PRIMARY KEY (organisation_id, batch_id)
    )`,
    `ALTER TABLE messages ALTER COLUMN text DROP NOT NULL`,
    // the operator's lookup of a message by id alone probes the primary key once per
    // organisation instead (MessageStore.findAnywhere): an entry less written by every version
    `DROP INDEX messages_id`
  ]
}
