import type { Migration } from "./Migration.ts"

/** Migration 16: ledger entries in monthly partitions; the entries of erased messages folded into per-lot monthly totals. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 16,
  name: "ledger entries in monthly partitions; the entries of erased messages folded into per-lot monthly totals",
  statements: [
    // Creates the month's partition of `parent` (partitioned by range of its timestamptz column
    // `at`, by UTC month), named <parent>_pYYYYMM, unless it exists; rows of that month in the
    // default partition <parent>_default (written where no partition was made ahead) move into
    // it first. Two processes may ask at once.
    `CREATE FUNCTION sms_month_partition(parent text, month date) RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        first date := date_trunc('month', month)::date;
        name text := parent || '_p' || to_char(first, 'YYYYMM');
        lower timestamptz := first::timestamp AT TIME ZONE 'UTC';
        upper timestamptz := (first + interval '1 month')::timestamp AT TIME ZONE 'UTC';
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('sms_month_partition:' || parent));
        IF to_regclass(name) IS NOT NULL THEN RETURN; END IF;
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
        EXECUTE format('WITH moved AS (DELETE FROM %I WHERE at >= %L AND at < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
          parent || '_default', lower, upper, name);
        EXECUTE format('ALTER TABLE %I ADD CHECK (at >= %L AND at < %L)', name, lower, upper);
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, name, lower, upper);
      END $$`,
    // The journal, rebuilt partitioned by month of `at`: an identity column cannot be partitioned
    // on PostgreSQL 15, so ids come from a sequence that goes on where the identity stopped.
    `ALTER TABLE credit_entries ALTER COLUMN id DROP IDENTITY`,
    `ALTER TABLE credit_entries RENAME TO credit_entries_unpartitioned`,
    `CREATE SEQUENCE credit_entries_id_seq`,
    `SELECT setval('credit_entries_id_seq', coalesce((SELECT max(id) FROM credit_entries_unpartitioned), 0) + 1, false)`,
    // No primary key: nothing looks an entry up by id (the sequence makes ids unique); erasure
    // finds a message's entries by credit_entries_message.
    `CREATE TABLE credit_entries (
      organisation_id uuid NOT NULL,
      id bigint NOT NULL DEFAULT nextval('credit_entries_id_seq'),
      lot_id bigint NOT NULL,
      message_id uuid,
      kind text NOT NULL CHECK (kind IN ('grant', 'reserve', 'consume', 'release')),
      amount integer NOT NULL CHECK (amount > 0),
      at timestamptz NOT NULL,
      FOREIGN KEY (organisation_id, lot_id) REFERENCES credit_lots (organisation_id, id)
    ) PARTITION BY RANGE (at)`,
    `ALTER SEQUENCE credit_entries_id_seq OWNED BY credit_entries.id`,
    `CREATE INDEX credit_entries_message ON credit_entries (organisation_id, message_id) WHERE message_id IS NOT NULL`,
    // where an entry goes when its month has no partition (the service makes them months ahead)
    `CREATE TABLE credit_entries_default PARTITION OF credit_entries DEFAULT`,
    // a partition for every month the journal holds, and for this month and the next two
    `SELECT sms_month_partition('credit_entries', m) FROM (
      SELECT DISTINCT date_trunc('month', at AT TIME ZONE 'UTC')::date AS m FROM credit_entries_unpartitioned
      UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => k))::date FROM generate_series(0, 2) AS k) AS months`,
    `INSERT INTO credit_entries (organisation_id, id, lot_id, message_id, kind, amount, at)
      SELECT organisation_id, id, lot_id, message_id, kind, amount, at FROM credit_entries_unpartitioned`,
    `DROP TABLE credit_entries_unpartitioned`,
    // What entries folded away said, per fold, lot, UTC month of the entries and kind: the entries
    // of the messages of one erasure, the grants of a dropped partition. Only ever inserted (two
    // erasures at once never wait on one row). A lot's counters are always its entries plus these.
    `CREATE TABLE credit_entry_totals (
      organisation_id uuid NOT NULL,
      lot_id bigint NOT NULL,
      month date NOT NULL,
      kind text NOT NULL CHECK (kind IN ('grant', 'reserve', 'consume', 'release')),
      amount bigint NOT NULL CHECK (amount > 0),
      entries integer NOT NULL CHECK (entries > 0),
      folded_at timestamptz NOT NULL,
      FOREIGN KEY (organisation_id, lot_id) REFERENCES credit_lots (organisation_id, id)
    )`
  ]
}
