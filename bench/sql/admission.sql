-- One scheduled single-message admission, statement for statement as the service issues it:
-- the API key lookup (src/organisations/ApiKeys.ts authenticate), then the admission
-- transaction of src/messages/Messages.ts (organisation + sender lookup, idempotency claim stored
-- with its 202 answer, message + event insert, lot lock, hold/entry/lot update).
-- pgbench turns every colon-prefixed name into a parameter, even inside a literal: the JSON texts below
-- therefore have a space after each key's colon and write the colons of times as \u003a.
-- Variables (-D): org (organisation uuid), keyid (its API key id), lot (its credit lot id).
\set k random(1, 9000000000000000000)
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
  VALUES (:org, 'messages', 'pgbench-' || :k, md5('f' || :k), 'done',
    md5('m' || :k)::uuid, NULL::uuid, 202::integer,
    ('{"id": "' || md5('m' || :k)::uuid || '", "to": "+261331234567", "sender_name": "INFO", "status": "scheduled", "segments": 1, "send_at": "2099-01-01T00\u003a00\u003a00.000Z", "delivery_time": null}')::text,
    ('/api/sms/v2/messages/' || md5('m' || :k)::uuid || '/')::text, now(), now())
  ON CONFLICT DO NOTHING RETURNING key;
WITH m AS (
    INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text, segments,
      status, send_at, due_at, created_at, updated_at)
    SELECT :org, x.id, x.batch_id, x.batch_position, x.to_number, x.sender_name, x.text, x.segments,
      x.status, x.send_at, CASE WHEN x.status = 'scheduled' THEN x.send_at END, now(), now()
    FROM json_to_recordset(('[{"id": "' || md5('m' || :k)::uuid || '", "batch_id": null, "batch_position": null, "to_number": "+261331234567", "sender_name": "INFO", "text": "Bench scheduled message", "segments": 1, "status": "scheduled", "send_at": "2099-01-01T00\u003a00\u003a00.000Z"}]')::json)
      AS x(id uuid, batch_id uuid, batch_position integer,
      to_number text, sender_name text, text text, segments smallint, status text, send_at timestamptz)
    RETURNING organisation_id, id, status)
  INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
  SELECT organisation_id, id, NULL, status, 'admission', now() FROM m;
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
    FROM json_to_recordset(('[{"organisation_id": "' || :org || '", "message_id": "' || md5('m' || :k)::uuid || '", "lot_id": "' || :lot || '", "amount": 1}]')::json)
      AS x(organisation_id uuid, message_id uuid, lot_id bigint, amount integer)
    RETURNING organisation_id, message_id, lot_id, amount),
  e AS (
    INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
    SELECT organisation_id, lot_id, message_id, 'reserve', amount, now() FROM h)
  UPDATE credit_lots AS l SET reserved = l.reserved + t.amount
  FROM (SELECT lot_id, sum(amount)::integer AS amount FROM h GROUP BY lot_id) AS t
  WHERE l.organisation_id = :org AND l.id = t.lot_id;
COMMIT;
