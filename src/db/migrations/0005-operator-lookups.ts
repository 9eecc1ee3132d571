import type { Migration } from "./Migration.ts"

/** Migration 5: operator lookups: a message by id alone, organisations newest first. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 5,
  name: "operator lookups: a message by id alone, organisations newest first",
  statements: [
    // the operator finds a message without its organisation (GET /admin/v1/messages/{id})
    `CREATE INDEX messages_id ON messages (id)`,
    `CREATE INDEX organisations_created ON organisations (created_at DESC, id DESC)`
  ]
}
