import type { Migration } from "./Migration.ts"

/** Migration 1: organisations, keys, senders, credit ledger, contacts. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 1,
  name: "organisations, keys, senders, credit ledger, contacts",
  statements: [
    `CREATE TABLE organisations (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      sms_enabled boolean NOT NULL DEFAULT true,
      default_sender_name text NOT NULL,
      created_at timestamptz NOT NULL
    )`,
    `CREATE TABLE senders (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      name text NOT NULL,
      active boolean NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, name)
    )`,
    // Keys are looked up by key_id alone (the key names its organisation), so key_id is unique
    // on its own; the secret is kept only as its SHA-256.
    `CREATE TABLE api_keys (
      key_id text PRIMARY KEY,
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      secret_sha256 bytea NOT NULL,
      permissions text[] NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`,
    `CREATE INDEX api_keys_organisation ON api_keys (organisation_id)`,
    // A lot is one grant. reserved and consumed only ever change together with a
    // credit_entries row that explains the change.
    `CREATE TABLE credit_lots (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      id bigint GENERATED ALWAYS AS IDENTITY,
      amount integer NOT NULL CHECK (amount > 0),
      valid_until date,
      reserved integer NOT NULL DEFAULT 0 CHECK (reserved >= 0),
      consumed integer NOT NULL DEFAULT 0 CHECK (consumed >= 0),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, id),
      CHECK (reserved + consumed <= amount)
    )`,
    // A hold is the part of one message's reservation drawn from one lot (two-phase:
    // pending, then posted or voided).
    `CREATE TABLE credit_holds (
      organisation_id uuid NOT NULL,
      message_id uuid NOT NULL,
      lot_id bigint NOT NULL,
      amount integer NOT NULL CHECK (amount > 0),
      state text NOT NULL CHECK (state IN ('pending', 'posted', 'voided')),
      created_at timestamptz NOT NULL,
      settled_at timestamptz,
      PRIMARY KEY (organisation_id, message_id, lot_id),
      FOREIGN KEY (organisation_id, lot_id) REFERENCES credit_lots (organisation_id, id)
    )`,
    `CREATE TABLE credit_entries (
      organisation_id uuid NOT NULL,
      id bigint GENERATED ALWAYS AS IDENTITY,
      lot_id bigint NOT NULL,
      message_id uuid,
      kind text NOT NULL CHECK (kind IN ('grant', 'reserve', 'consume', 'release')),
      amount integer NOT NULL CHECK (amount > 0),
      at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, id),
      FOREIGN KEY (organisation_id, lot_id) REFERENCES credit_lots (organisation_id, id)
    )`,
    `CREATE TABLE contacts (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      id bigint GENERATED ALWAYS AS IDENTITY,
      phone_number text NOT NULL,
      first_name text,
      company text,
      position text,
      address text,
      birthday date,
      home_email text,
      office_email text,
      list_name text,
      source text,
      status bigint,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, id),
      UNIQUE (organisation_id, phone_number)
    )`
  ]
}
