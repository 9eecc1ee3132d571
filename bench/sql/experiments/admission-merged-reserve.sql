-- Experiment: store first (see admission-store-first.sql) and the reservation as one statement
-- when the first valid lot can fund it: UPDATE ... RETURNING takes the lot's row lock itself
-- (no SELECT ... FOR UPDATE round trip) and the hold and entry are inserted from its result.
-- The service would fall back to the current two statements when it returns no row.
-- Variables (-D): org, keyid, lot.
\set k random(1, 9000000000000000000)
SELECT organisation_id::text, secret_sha256, permissions, revoked_at IS NOT NULL AS revoked
  FROM api_keys WHERE key_id = :keyid;
BEGIN;
INSERT INTO idempotency_keys
    (organisation_id, route, key, fingerprint, state, message_id, batch_id, created_at, updated_at)
  VALUES (:org, 'messages', 'pgbench-' || :k, md5('f' || :k), 'in_progress',
    md5('m' || :k)::uuid, NULL::uuid, now(), now())
  ON CONFLICT DO NOTHING RETURNING key;
SELECT id::text, name, sms_enabled, default_sender_name FROM organisations WHERE id = :org;
SELECT name, active FROM senders WHERE organisation_id = :org AND name = 'INFO';
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
UPDATE idempotency_keys SET state = 'done', response_status = 202,
    response_body = '{"id": "' || md5('m' || :k)::uuid || '", "to": "+261331234567", "sender_name": "INFO", "status": "scheduled", "segments": 1, "send_at": "2099-01-01T00\u003a00\u003a00.000Z", "delivery_time": null}',
    response_location = '/api/sms/v2/messages/' || md5('m' || :k)::uuid || '/', updated_at = now()
  WHERE organisation_id = :org AND route = 'messages' AND key = 'pgbench-' || :k;
WITH l AS (
    UPDATE credit_lots SET reserved = reserved + 1
    WHERE organisation_id = :org
      AND id = (SELECT id FROM credit_lots
        WHERE organisation_id = :org
          AND (valid_until IS NULL OR valid_until >= current_date)
          AND amount - reserved - consumed > 0
        ORDER BY valid_until ASC NULLS LAST, id ASC LIMIT 1)
      AND amount - reserved - consumed >= 1
    RETURNING organisation_id, id),
  h AS (
    INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
    SELECT organisation_id, md5('m' || :k)::uuid, id, 1, 'pending', now() FROM l
    RETURNING organisation_id, message_id, lot_id, amount)
  INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
  SELECT organisation_id, lot_id, message_id, 'reserve', amount, now() FROM h;
COMMIT;
