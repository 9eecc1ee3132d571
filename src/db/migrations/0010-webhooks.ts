import type { Migration } from "./Migration.ts"

/** Migration 10: status webhooks: endpoints, their events (the outbox) and deliveries. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 10,
  name: "status webhooks: endpoints, their events (the outbox) and deliveries",
  statements: [
    // An organisation's receivers. `events` is the subscribed types (all of them when created
    // without a list); `previous_secret` keeps signing beside `secret` until `previous_secret_until`.
    `CREATE TABLE webhook_endpoints (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      id uuid NOT NULL,
      url text NOT NULL,
      events text[] NOT NULL,
      description text,
      enabled boolean NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, id)
    )`,
    // The outbox: one row per emitted event, written in the transaction of the status change.
    // `message` is the message as it was at the transition (the columns its representation reads).
    `CREATE TABLE webhook_events (
      organisation_id uuid NOT NULL,
      id uuid NOT NULL,
      type text NOT NULL,
      occurred_at timestamptz NOT NULL,
      message_id uuid,
      batch_id uuid,
      message jsonb,
      PRIMARY KEY (organisation_id, id)
    )`,
    `CREATE UNIQUE INDEX webhook_events_batch_completed ON webhook_events (organisation_id, batch_id)
      WHERE type = 'batch.completed'`,
    // One row per (endpoint, event): its attempts, due at `next_attempt_at` while pending; a
    // process holds it while `claim_until` is ahead (a crash lets it go).
    `CREATE TABLE webhook_deliveries (
      organisation_id uuid NOT NULL,
      endpoint_id uuid NOT NULL,
      event_id uuid NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      claim_until timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, endpoint_id, event_id),
      FOREIGN KEY (organisation_id, endpoint_id) REFERENCES webhook_endpoints (organisation_id, id) ON DELETE CASCADE,
      FOREIGN KEY (organisation_id, event_id) REFERENCES webhook_events (organisation_id, id)
    )`,
    `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`,
    // each endpoint's due deliveries in order, for the claim (WebhookStore.claimDue)
    `CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (organisation_id, endpoint_id, next_attempt_at)
      WHERE state = 'pending'`,
    `CREATE INDEX webhook_deliveries_log ON webhook_deliveries (organisation_id, endpoint_id, created_at DESC, event_id DESC)`
  ]
}
