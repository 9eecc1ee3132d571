/**
 * The schema, as numbered migrations. Never edit one that has shipped: add the next number.
 * Every tenant table carries `organisation_id` and its keys lead with it, so the data can be
 * distributed by organisation later without a rewrite.
 */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

export const migrations: ReadonlyArray<Migration> = [
  {
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
  },
  {
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
  },
  {
    version: 3,
    name: "message batches",
    statements: [
      `CREATE TABLE message_batches (
        organisation_id uuid NOT NULL REFERENCES organisations (id),
        id uuid NOT NULL,
        recipient_count integer NOT NULL CHECK (recipient_count BETWEEN 1 AND 1000),
        credits_reserved integer NOT NULL CHECK (credits_reserved >= 1),
        send_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (organisation_id, id)
      )`,
      `CREATE UNIQUE INDEX messages_batch_position ON messages (organisation_id, batch_id, batch_position)
        WHERE batch_id IS NOT NULL`
    ]
  },
  {
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
  },
  {
    version: 5,
    name: "operator lookups: a message by id alone, organisations newest first",
    statements: [
      // the operator finds a message without its organisation (GET /admin/v1/messages/{id})
      `CREATE INDEX messages_id ON messages (id)`,
      `CREATE INDEX organisations_created ON organisations (created_at DESC, id DESC)`
    ]
  },
  {
    version: 6,
    name: "accepted messages index, for /metrics",
    statements: [
      // /metrics counts the in-flight statuses at every scrape; the others have partial indexes
      // already (due, verify, processing). Without this one, counting accepted messages (those
      // waiting for a receipt) reads the whole table: 550 ms instead of 5 ms on 3 million rows.
      `CREATE INDEX messages_accepted ON messages (updated_at) WHERE status = 'accepted'`
    ]
  },
  {
    version: 7,
    name: "an organisation's messages and batches newest first, for the console",
    statements: [
      // the operator's pages of an organisation's messages and batches (GET
      // /admin/v1/organizations/{id}/messages and /batches) read them in (created_at, id) order
      `CREATE INDEX messages_newest ON messages (organisation_id, created_at DESC, id DESC)`,
      `CREATE INDEX message_batches_newest ON message_batches (organisation_id, created_at DESC, id DESC)`
    ]
  },
  {
    version: 8,
    name: "how many times the simulator was handed each message",
    statements: [
      // A second submission of a message is a second SMS: the simulator counts them, so that tests
      // (kill -9, outages, several processes) can show it never happens. Existing rows were one.
      `ALTER TABLE simulator_messages ADD COLUMN submissions integer NOT NULL DEFAULT 1 CHECK (submissions >= 1)`
    ]
  },
  {
    version: 9,
    name: "receipts matched per message: by provider id and number, the newest accepted first",
    statements: [
      // An SMSC that restarts gives ids again: a receipt is no longer one per (provider ref,
      // outcome) but one per delivery report, matched to the newest accepted message with its id
      // and its number; repeats are told per message when applied.
      `ALTER TABLE provider_receipts DROP CONSTRAINT provider_receipts_provider_ref_outcome_key`,
      `ALTER TABLE provider_receipts ADD COLUMN recipient text`,
      `ALTER TABLE provider_receipts ADD COLUMN submitted_at timestamptz`,
      `CREATE INDEX provider_receipts_ref ON provider_receipts (provider_ref) WHERE state = 'pending'`,
      // unmatched receipts of a number, for the verification of a message left unknown without
      // the provider's id (its receipt tells it was taken)
      `CREATE INDEX provider_receipts_orphans ON provider_receipts (recipient, submitted_at)
        WHERE state = 'pending' AND recipient IS NOT NULL`,
      // messages of a number still waiting for an outcome: a receipt that finds no accepted
      // message waits while one of them may still take it
      `CREATE INDEX messages_in_flight_to ON messages (to_number) WHERE status IN ('processing', 'unknown')`,
      `ALTER TABLE message_events DROP CONSTRAINT message_events_source_check`,
      `ALTER TABLE message_events ADD CONSTRAINT message_events_source_check CHECK (source IN ('admission', 'provider',
        'receipt', 'verification', 'recovery', 'dispatch', 'erasure', 'matched_receipt'))`
    ]
  },
  {
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
  },
  {
    version: 11,
    name: "retention and compaction: an organisation's own period, the finished messages erased, what they no longer need removed",
    statements: [
      // null: the service's default (SMS_RETENTION_DAYS); no value at all keeps messages for ever
      `ALTER TABLE organisations ADD COLUMN retention_days integer CHECK (retention_days >= 1)`,
      // retention finds, per organisation, the oldest finished messages not yet erased (a message
      // final since updated_at: nothing moves a final message but its erasure, which this skips)
      `CREATE INDEX messages_erasable ON messages (organisation_id, updated_at)
        WHERE erased_at IS NULL AND status IN ('delivered', 'undeliverable', 'failed', 'blocked')`,
      // erasure forgets the answer stored for the message's key: found by the message, not the key
      `CREATE INDEX idempotency_keys_message ON idempotency_keys (organisation_id, message_id) WHERE message_id IS NOT NULL`,
      // compaction removes the receipts applied, and the simulator's messages receipted, a day ago
      `CREATE INDEX provider_receipts_applied ON provider_receipts (settled_at) WHERE state = 'applied'`,
      `CREATE INDEX simulator_messages_receipted ON simulator_messages (receipt_at) WHERE receipt_due_at IS NULL`
    ]
  },
  {
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
  },
  {
    version: 13,
    name: "due messages by organisation, for the fair-share claim; immediate sends handed over, first",
    statements: [
      // the claim walks the organisations holding scheduled messages and takes each one's earliest
      // due messages (MessageQueueStore.claimDue)
      `CREATE INDEX messages_due_by_organisation ON messages (organisation_id, due_at, created_at, batch_position)
        WHERE status = 'scheduled'`,
      // immediate sends handed over to the holders of their route's bind come first (BindHolderRelay.ts)
      `CREATE INDEX messages_handed_over ON messages (due_at) WHERE status = 'scheduled' AND send_at IS NULL`
    ]
  },
  {
    version: 14,
    name: "a finished message's timeline collapsed into its row",
    statements: [
      // A day after a message became final, compaction moves its message_events rows here, 9 bytes
      // an entry (src/messages/CompactTimeline.ts). Null: not collapsed yet (every message of an
      // upgraded database, collapsed by compaction in its sets like any other).
      `ALTER TABLE messages ADD COLUMN timeline bytea`,
      // compaction finds the finished messages not collapsed yet, oldest first; a collapsed one leaves the index
      `CREATE INDEX messages_timeline_due ON messages (updated_at)
        WHERE timeline IS NULL AND status IN ('delivered', 'undeliverable', 'failed', 'blocked')`
    ]
  },
  {
    version: 15,
    name: "timelines written in the message row, settled holds and applied receipts no longer kept",
    statements: [
      // Every status change now appends its entry to messages.timeline (src/messages/CompactTimeline.ts,
      // the same 9-byte entries as migration 14): the timelines of messages still in flight move
      // there now, entry for entry (from_status is the previous entry's to_status); those of finished
      // messages are collapsed by compaction as before.
      `UPDATE messages AS m SET timeline = p.timeline
      FROM (SELECT e.organisation_id, e.message_id, string_agg((set_byte(decode('00', 'hex'), 0, (array_position(ARRAY['scheduled', 'processing', 'accepted', 'delivered', 'undeliverable', 'blocked', 'failed', 'unknown']::text[], e.to_status) - 1) * 16
            + array_position(ARRAY['admission', 'provider', 'receipt', 'verification', 'recovery', 'dispatch', 'erasure', 'matched_receipt']::text[], e.source) - 1)
          || int8send((extract(epoch FROM e.at) * 1000000)::bigint)), ''::bytea ORDER BY e.id) AS timeline
        FROM message_events AS e JOIN messages AS x ON x.organisation_id = e.organisation_id AND x.id = e.message_id
        WHERE x.timeline IS NULL AND x.status NOT IN ('delivered', 'undeliverable', 'failed', 'blocked')
        GROUP BY e.organisation_id, e.message_id) AS p
      WHERE m.organisation_id = p.organisation_id AND m.id = p.message_id`,
      `DELETE FROM message_events AS e USING messages AS m
      WHERE m.organisation_id = e.organisation_id AND m.id = e.message_id
        AND m.status NOT IN ('delivered', 'undeliverable', 'failed', 'blocked') AND m.timeline IS NOT NULL`,
      // A settled hold is removed by its settlement (its consume or release entry says what it
      // was); an applied receipt is not kept (its message keeps the outcome).
      `DELETE FROM credit_holds WHERE state <> 'pending'`,
      `DELETE FROM provider_receipts WHERE state <> 'pending'`,
      `DROP INDEX provider_receipts_applied`,
      `ALTER TABLE provider_receipts DROP COLUMN organisation_id, DROP COLUMN message_id, DROP COLUMN settled_at`
    ]
  },
  {
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
  },
  {
    version: 17,
    name: "the simulator's provider ref no longer indexed",
    statements: [
      // `sim:<message id>`: unique by its message's key, and never looked up by itself (a sent
      // receipt's row is found where its claim left it); every write of a row updated the index
      `ALTER TABLE simulator_messages DROP CONSTRAINT simulator_messages_provider_ref_key`
    ]
  },
  {
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
  },
  {
    version: 19,
    name: "a batch's text stored once; the operator's lookup by id without an index of its own",
    statements: [
      // The text of a batch's members, once (a batch has one text): the members' rows hold none
      // (null), so every version a status change writes of them is that much smaller. Removed
      // once every member is erased (MessageStore.erase). Members admitted before keep their own.
      `CREATE TABLE message_texts (
        organisation_id uuid NOT NULL,
        batch_id uuid NOT NULL,
        text text NOT NULL,
        PRIMARY KEY (organisation_id, batch_id)
      )`,
      `ALTER TABLE messages ALTER COLUMN text DROP NOT NULL`,
      // the operator's lookup of a message by id alone probes the primary key once per
      // organisation instead (MessageStore.findAnywhere): an entry less written by every version
      `DROP INDEX messages_id`
    ]
  },
  {
    version: 20,
    name: "the simulator's owed receipts in a table of their own",
    statements: [
      // A receipt the simulator owes, until the service's inbox has stored it: the row of what it
      // received is then written once, never updated (its receipt sent left a dead version of it
      // and an index entry behind). At most one row a message (written when its receipt becomes
      // owed, replaced when one is forced); a row whose receipt is being sent is due again at its
      // resend time. The provider ref was `sim:<message id>`: derived, no longer stored.
      `CREATE TABLE simulator_receipts_owed (
        organisation_id uuid NOT NULL,
        message_id uuid NOT NULL,
        due_at timestamptz NOT NULL
      )`,
      `CREATE INDEX simulator_receipts_owed_due ON simulator_receipts_owed (due_at)`,
      `INSERT INTO simulator_receipts_owed (organisation_id, message_id, due_at)
        SELECT organisation_id, message_id, receipt_due_at FROM simulator_messages WHERE receipt_due_at IS NOT NULL`,
      `DROP INDEX simulator_messages_receipt_due`,
      `DROP INDEX simulator_messages_receipted`,
      `ALTER TABLE simulator_messages DROP COLUMN receipt_due_at, DROP COLUMN provider_ref`,
      // the messages whose receipt was owed, by when (those sent a month ago are forgotten)
      `CREATE INDEX simulator_messages_receipted ON simulator_messages (receipt_at) WHERE receipt_at IS NOT NULL`
    ]
  }
]
