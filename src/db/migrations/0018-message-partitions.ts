import type { Migration } from "./Migration.ts"

/** Migration 18: messages in monthly partitions by id; the erased messages of a past month packed, their partition dropped. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 18,
  name: "messages in monthly partitions by id; the erased messages of a past month packed, their partition dropped",
  statements: [
    // The smallest time-ordered id (UUIDv7, src/platform/Ids.ts) of the millisecond `at`.
    `CREATE FUNCTION sms_uuid_floor(at timestamptz) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
      SELECT (lpad(to_hex(floor(extract(epoch FROM at) * 1000)::bigint), 12, '0') || '00000000000000000000')::uuid $$`,
    // Creates the partition of `messages` holding the ids made in the UTC month of `month`
    // (messages_pYYYYMM), unless it exists; the rows of that range in the default partition
    // (where an id goes when its month has no partition) move into it first. Two processes may ask at once.
    `CREATE FUNCTION sms_message_partition(month date) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        first date := date_trunc('month', month)::date;
        name text := 'messages_p' || to_char(first, 'YYYYMM');
        lower uuid := sms_uuid_floor(first::timestamp AT TIME ZONE 'UTC');
        upper uuid := sms_uuid_floor((first + interval '1 month')::timestamp AT TIME ZONE 'UTC');
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('sms_month_partition:messages'));
        IF to_regclass(name) IS NOT NULL THEN RETURN; END IF;
        EXECUTE format('CREATE TABLE %I (LIKE messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
        EXECUTE format('WITH moved AS (DELETE FROM messages_default WHERE id >= %L AND id < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
          lower, upper, name);
        EXECUTE format('ALTER TABLE %I ADD CHECK (id >= %L AND id < %L)', name, lower, upper);
        EXECUTE format('ALTER TABLE messages ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', name, lower, upper);
      END $$`,
    // The timeline rows of an upgraded database no longer point at messages (a partition drops
    // whole; compaction folds the rows into their messages and deletes them).
    `ALTER TABLE message_events DROP CONSTRAINT message_events_organisation_id_message_id_fkey`,
    // messages, rebuilt partitioned by the month of its time-ordered ids: a month's messages
    // are one table, dropped in one statement once retention has erased every one of them and
    // they are packed (erased_messages below). Ids that are not time-ordered (the random ids
    // of a database from before) stay in the default partition.
    `ALTER TABLE messages RENAME TO messages_unpartitioned`,
    `ALTER TABLE messages_unpartitioned DROP CONSTRAINT messages_pkey`,
    `ALTER TABLE messages_unpartitioned DROP CONSTRAINT messages_organisation_id_fkey`,
    ...[
      "messages_accepted",
      "messages_batch_position",
      "messages_due",
      "messages_due_by_organisation",
      "messages_erasable",
      "messages_handed_over",
      "messages_id",
      "messages_in_flight_to",
      "messages_newest",
      "messages_processing",
      "messages_provider_ref",
      "messages_timeline_due",
      "messages_verify"
    ].map((index) => `DROP INDEX ${index}`),
    `CREATE TABLE messages (LIKE messages_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (id)`,
    `ALTER TABLE messages ADD PRIMARY KEY (organisation_id, id)`,
    `ALTER TABLE messages ADD FOREIGN KEY (organisation_id) REFERENCES organisations (id)`,
    `CREATE TABLE messages_default PARTITION OF messages DEFAULT`,
    // a partition for every month of the time-ordered ids held (made since 2026), and this month and the next two
    `SELECT sms_message_partition(m) FROM (
      SELECT DISTINCT date_trunc('month', to_timestamp(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint / 1000.0)
        AT TIME ZONE 'UTC')::date AS m
      FROM messages_unpartitioned WHERE substr(id::text, 15, 1) = '7'
      UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => k))::date FROM generate_series(0, 2) AS k) AS months
      WHERE m >= '2026-01-01' AND m < (now() AT TIME ZONE 'UTC')::date + 120`,
    `INSERT INTO messages SELECT * FROM messages_unpartitioned`,
    `DROP TABLE messages_unpartitioned`,
    // the indexes as they were, made on every partition, but for two: a batch's positions are
    // unique by construction (its admission numbers them), no longer by an index (a unique index
    // of a partitioned table must hold the partition key); and messages_newest is gone: an
    // organisation's messages are listed in the order of the primary key, their ids being made
    // from the instant of their creation
    `CREATE INDEX messages_accepted ON messages (updated_at) WHERE status = 'accepted'`,
    `CREATE INDEX messages_batch_position ON messages (organisation_id, batch_id, batch_position) WHERE batch_id IS NOT NULL`,
    `CREATE INDEX messages_due ON messages (due_at, created_at, batch_position) WHERE status = 'scheduled'`,
    `CREATE INDEX messages_due_by_organisation ON messages (organisation_id, due_at, created_at, batch_position)
      WHERE status = 'scheduled'`,
    `CREATE INDEX messages_erasable ON messages (organisation_id, updated_at)
      WHERE erased_at IS NULL AND status IN ('delivered', 'undeliverable', 'failed', 'blocked')`,
    `CREATE INDEX messages_handed_over ON messages (due_at) WHERE status = 'scheduled' AND send_at IS NULL`,
    `CREATE INDEX messages_id ON messages (id)`,
    `CREATE INDEX messages_in_flight_to ON messages (to_number) WHERE status IN ('processing', 'unknown')`,
    `CREATE INDEX messages_processing ON messages (updated_at) WHERE status = 'processing'`,
    `CREATE INDEX messages_provider_ref ON messages (provider_message_id) WHERE provider_message_id IS NOT NULL`,
    `CREATE INDEX messages_timeline_due ON messages (updated_at)
      WHERE timeline IS NULL AND status IN ('delivered', 'undeliverable', 'failed', 'blocked')`,
    `CREATE INDEX messages_verify ON messages (verify_at) WHERE status = 'unknown'`,
    // A range of ids, for finding the pack that holds an id whatever its organisation.
    `CREATE TYPE sms_uuid_range AS RANGE (subtype = uuid)`,
    // Erased messages, packed: what an erased message still answers (status, segments, times,
    // timeline, batch and position) for up to 256 messages of one organisation a row, one
    // column per field, in id order. A month's messages are packed once every one of them is
    // erased and the month is over, and their partition is then dropped (MessagePartitions.ts).
    // The ids of an organisation's packs never overlap (a pack is a run of its messages in id
    // order, within one month); a pack holds the members of one batch, or messages of no batch.
    // Statuses and timelines are stored as CompactTimeline.ts codes them.
    `CREATE TABLE erased_messages (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      first_id uuid NOT NULL,
      last_id uuid NOT NULL,
      batch_id uuid,
      members integer NOT NULL CHECK (members BETWEEN 1 AND 256),
      -- a bit per status held (its code's), for lists of one status
      statuses_held integer NOT NULL,
      ids uuid[] NOT NULL,
      positions integer[],
      statuses smallint[] NOT NULL,
      segments smallint[] NOT NULL,
      send_ats timestamptz[] NOT NULL,
      delivery_times timestamptz[] NOT NULL,
      erased_ats timestamptz[] NOT NULL,
      created_ats timestamptz[] NOT NULL,
      timelines bytea[] NOT NULL,
      packed_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, last_id)
    )`,
    `CREATE INDEX erased_messages_ids ON erased_messages USING gist (sms_uuid_range(first_id, last_id, '[]'))`,
    `CREATE INDEX erased_messages_batch ON erased_messages (organisation_id, batch_id) WHERE batch_id IS NOT NULL`
  ]
}
