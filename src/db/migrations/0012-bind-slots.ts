import type { Migration } from "./Migration.ts"

/** Migration 12: SMPP bind slots: the fleet's binds to each SMSC, leased to processes. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 12,
  name: "SMPP bind slots: the fleet's binds to each SMSC, leased to processes",
  statements: [
    // An SMSC entry allows the fleet `binds` binds at once: one row per slot, leased by the
    // process that binds with it until `lease_until` (database time), renewed while it lives; a
    // slot whose lease ran out is free. `holder` is the process's own id (null when given up).
    `CREATE TABLE smpp_bind_slots (
      route text NOT NULL,
      slot integer NOT NULL CHECK (slot >= 0),
      holder uuid,
      holder_pid integer,
      lease_until timestamptz NOT NULL,
      PRIMARY KEY (route, slot)
    )`
  ]
}
