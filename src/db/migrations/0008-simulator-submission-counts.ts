import type { Migration } from "./Migration.ts"

/** Migration 8: how many times the simulator was handed each message. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 8,
  name: "how many times the simulator was handed each message",
  statements: [
    // A second submission of a message is a second SMS: the simulator counts them, so that tests
    // (kill -9, outages, several processes) can show it never happens. Existing rows were one.
    `ALTER TABLE simulator_messages ADD COLUMN submissions integer NOT NULL DEFAULT 1 CHECK (submissions >= 1)`
  ]
}
