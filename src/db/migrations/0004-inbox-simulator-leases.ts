import type { Migration } from "./Migration.ts"

/** Migration 4: provider inbox, simulator state, process leases. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 4,
  name: "provider inbox, simulator state, process leases",
  statements: [
    // The process working on a message: set while it is `processing` (its owner submits and
    // settles it) and while a dispatcher holds a claim on it as `scheduled` (until claim_until).
    `ALTER TABLE messages ADD COLUMN worker_id uuid`,
    `ALTER TABLE messages ADD COLUMN claim_until timestamptz`,
    // Receipts find their message by the provider's reference (`<route>:<id>`), whatever its organisation.
    `CREATE INDEX messages_provider_ref ON messages (provider_message_id) WHERE provider_message_id IS NOT NULL`,
    // One row per live service process, renewed while it runs: the messages of a process whose
    // lease has run out are recovered by the others.
    `CREATE TABLE workers (
      id uuid PRIMARY KEY,
      started_at timestamptz NOT NULL,
      lease_until timestamptz NOT NULL,
      pid integer NOT NULL
    )`,
    // Delivery receipts, stored before the provider is told they were received, applied once
    // their message can take them (a receipt may beat the answer that tells us the provider's
    // id). A repeated receipt is one row. Unmatched ones stay pending and are counted.
    `CREATE TABLE provider_receipts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      provider_ref text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('delivered', 'undeliverable')),
      occurred_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'applied', 'ignored')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      organisation_id uuid,
      message_id uuid,
      settled_at timestamptz,
      UNIQUE (provider_ref, outcome)
    )`,
    `CREATE INDEX provider_receipts_pending ON provider_receipts (next_attempt_at) WHERE state = 'pending'`,
    // A provider's late answer to a submission reported unknown: what the verifier settles it by.
    `CREATE TABLE provider_evidence (
      organisation_id uuid NOT NULL,
      message_id uuid NOT NULL,
      result text NOT NULL CHECK (result IN ('accepted', 'rejected')),
      provider_ref text,
      reason text,
      received_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, message_id)
    )`,
    // The in-process simulator's own memory (what it received, which receipt it owes and when),
    // kept here so that its outcomes hold across restarts and processes.
    `CREATE TABLE simulator_messages (
      organisation_id uuid NOT NULL,
      message_id uuid NOT NULL,
      provider_ref text NOT NULL UNIQUE,
      receipt text NOT NULL CHECK (receipt IN ('delivered', 'undeliverable', 'none')),
      receipt_at timestamptz,
      receipt_due_at timestamptz,
      received_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, message_id)
    )`,
    `CREATE INDEX simulator_messages_receipt_due ON simulator_messages (receipt_due_at) WHERE receipt_due_at IS NOT NULL`,
    // Aborts the statement that calls it (and its implicit transaction) with SQLSTATE SMS01:
    // single-statement admissions use it when a race leaves them half done, and start again
    // on the general path.
    `CREATE FUNCTION sms_abort(reason text) RETURNS integer LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION USING ERRCODE = 'SMS01', MESSAGE = reason; END $$`
  ]
}
