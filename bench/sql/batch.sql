-- One batch admission of {{SIZE}} recipients, statement for statement as the service issues it:
-- the API key lookup, then the transaction of src/batches/Batches.ts create (organisation +
-- sender lookup, idempotency claim stored with its 202 answer, batch row, one multi-row
-- message + event insert, lot lock, one multi-row hold/entry/lot update). The {{SIZE}}-row JSON documents are
-- constant text in which @@@@@@@@@@@@ is replaced by 12 hex digits unique to the transaction,
-- so the server parses as much JSON as it does for the service. pgbench turns every colon-prefixed name
-- into a parameter, even inside a literal: the JSON has a space after each key's colon and
-- writes the colons of times as \u003a.
-- Variables (-D): org, keyid, lot.
\set k random(1, 140737488355327)
SELECT organisation_id::text, secret_sha256, permissions, revoked_at IS NOT NULL AS revoked
  FROM api_keys WHERE key_id = :keyid;
BEGIN;
SELECT o.sms_enabled, coalesce(NULL::text, o.default_sender_name) AS sender_name,
    coalesce(s.active, false) AS sender_active
  FROM organisations o
  LEFT JOIN senders s ON s.organisation_id = o.id AND s.name = coalesce(NULL::text, o.default_sender_name)
  WHERE o.id = :org;
INSERT INTO idempotency_keys
    (organisation_id, route, key, fingerprint, state, message_id, batch_id,
     response_status, response_body, response_location, created_at, updated_at)
  VALUES (:org, 'message-batches', 'pgbench-batch-' || :k, md5('f' || :k), 'done',
    NULL::uuid, ('b0000000-0000-4000-8000-' || lpad(to_hex(:k::bigint), 12, '0'))::uuid, 202::integer,
    ('{"id": "b0000000-0000-4000-8000-' || lpad(to_hex(:k::bigint), 12, '0') || '", "recipient_count": {{SIZE}}, "credits_reserved": {{SIZE}}, "send_at": "2099-01-01T00\u003a00\u003a00.000Z", "created_at": "2026-01-01T00\u003a00\u003a00.000Z", "counts": {"scheduled": {{SIZE}}, "processing": 0, "accepted": 0, "delivered": 0, "undeliverable": 0, "blocked": 0, "failed": 0, "unknown": 0}}')::text,
    ('/api/sms/v2/message-batches/b0000000-0000-4000-8000-' || lpad(to_hex(:k::bigint), 12, '0') || '/')::text,
    now(), now())
  ON CONFLICT DO NOTHING RETURNING key;
INSERT INTO message_batches (organisation_id, id, recipient_count, credits_reserved, send_at, created_at)
  VALUES (:org, ('b0000000-0000-4000-8000-' || lpad(to_hex(:k::bigint), 12, '0'))::uuid, {{SIZE}}, {{SIZE}},
    '2099-01-01'::date::timestamp AT TIME ZONE 'UTC', now());
INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text, segments,
    status, send_at, due_at, created_at, updated_at, timeline)
  SELECT :org, x.id, x.batch_id, x.batch_position, x.to_number, x.sender_name, x.text, x.segments,
    x.status, x.send_at, CASE WHEN x.status = 'scheduled' THEN x.send_at END, now(), now(), '\x00'::bytea || int8send((extract(epoch FROM now()) * 1000000)::bigint)
  FROM json_to_recordset(replace('{{MESSAGES_JSON}}', '@@@@@@@@@@@@', lpad(to_hex(:k::bigint), 12, '0'))::json)
    AS x(id uuid, batch_id uuid, batch_position integer,
    to_number text, sender_name text, text text, segments smallint, status text, send_at timestamptz);
SELECT id::text AS id, (amount - reserved - consumed) AS free
  FROM credit_lots
  WHERE organisation_id = :org
    AND (valid_until IS NULL OR valid_until >= current_date)
    AND amount - reserved - consumed > 0
  ORDER BY valid_until ASC NULLS LAST, credit_lots.id ASC
  FOR UPDATE;
WITH h AS (
    INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
    SELECT organisation_id, message_id, lot_id, amount, 'pending', now()
    FROM json_to_recordset(replace('{{HOLDS_JSON}}', '@@@@@@@@@@@@', lpad(to_hex(:k::bigint), 12, '0'))::json)
      AS x(organisation_id uuid, message_id uuid, lot_id bigint, amount integer)
    RETURNING organisation_id, message_id, lot_id, amount),
  e AS (
    INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
    SELECT organisation_id, lot_id, message_id, 'reserve', amount, now() FROM h)
  UPDATE credit_lots AS l SET reserved = l.reserved + t.amount
  FROM (SELECT lot_id, sum(amount)::integer AS amount FROM h GROUP BY lot_id) AS t
  WHERE l.organisation_id = :org AND l.id = t.lot_id;
COMMIT;
