import type { Migration } from "./Migration.ts"

/** Migration 2: messages, their timeline, idempotency keys, service secret. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 2,
  name: "messages, their timeline, idempotency keys, service secret",
  statements: [
    // One row per SMS. `due_at` is when the dispatcher should submit it (scheduled only);
    // `submitted_at` is set just before the provider is called: a crash before it proves the
    // message never left. to_number, sender_name and text are blanked by erasure.
    `CREATE TABLE messages (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      id uuid NOT NULL,
      batch_id uuid,
      batch_position integer,
      to_number text NOT NULL,
      sender_name text NOT NULL,
      text text NOT NULL,
      segments smallint NOT NULL CHECK (segments BETWEEN 1 AND 2),
      status text NOT NULL CHECK (status IN ('scheduled', 'processing', 'accepted', 'delivered',
        'undeliverable', 'blocked', 'failed', 'unknown')),
      send_at timestamptz,
      due_at timestamptz,
      submitted_at timestamptz,
      provider_message_id text,
      delivery_time timestamptz,
      verify_at timestamptz,
      verify_attempts integer NOT NULL DEFAULT 0,
      erased_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, id)
    )`,
    `CREATE INDEX messages_due ON messages (due_at, created_at, batch_position) WHERE status = 'scheduled'`,
    `CREATE INDEX messages_verify ON messages (verify_at) WHERE status = 'unknown'`,
    `CREATE INDEX messages_processing ON messages (updated_at) WHERE status = 'processing'`,
    `CREATE TABLE message_events (
      organisation_id uuid NOT NULL,
      id bigint GENERATED ALWAYS AS IDENTITY,
      message_id uuid NOT NULL,
      from_status text,
      to_status text NOT NULL,
      source text NOT NULL CHECK (source IN ('admission', 'provider', 'receipt', 'verification', 'recovery', 'dispatch', 'erasure')),
      at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, id),
      FOREIGN KEY (organisation_id, message_id) REFERENCES messages (organisation_id, id)
    )`,
    `CREATE INDEX message_events_message ON message_events (organisation_id, message_id, id)`,
    // The answer a creation gave, replayed for the same (organisation, route, key).
    // fingerprint is an HMAC of the canonical request, so it reveals nothing once erased.
    `CREATE TABLE idempotency_keys (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      route text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_progress', 'done')),
      message_id uuid,
      batch_id uuid,
      response_status integer,
      response_body text,
      response_location text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, route, key)
    )`,
    `CREATE INDEX idempotency_keys_in_progress ON idempotency_keys (organisation_id, message_id)
      WHERE state = 'in_progress'`,
    `CREATE TABLE service_secrets (
      name text PRIMARY KEY,
      secret bytea NOT NULL
    )`
  ]
}
