import type { Migration } from "./Migration.ts"

/** Migration 7: an organisation's messages and batches newest first, for the console. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 7,
  name: "an organisation's messages and batches newest first, for the console",
  statements: [
    // the operator's pages of an organisation's messages and batches (GET
    // /admin/v1/organizations/{id}/messages and /batches) read them in (created_at, id) order
    `CREATE INDEX messages_newest ON messages (organisation_id, created_at DESC, id DESC)`,
    `CREATE INDEX message_batches_newest ON message_batches (organisation_id, created_at DESC, id DESC)`
  ]
}
