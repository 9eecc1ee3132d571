import type { Migration } from "./Migration.ts"

/** Migration 17: the simulator's provider ref no longer indexed. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 17,
  name: "the simulator's provider ref no longer indexed",
  statements: [
    // `sim:<message id>`: unique by its message's key, and never looked up by itself (a sent
    // receipt's row is found where its claim left it); every write of a row updated the index
    `ALTER TABLE simulator_messages DROP CONSTRAINT simulator_messages_provider_ref_key`
  ]
}
