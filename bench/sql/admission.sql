-- One scheduled single-message admission, statement for statement as the service issues it: the
-- API key lookup (src/organisations/ApiKeys.ts authenticate), then the one-statement admission of
-- src/messages/QuickAdmission.ts (sending profile, stored key, a lot of the earliest validity that
-- no concurrent admission holds; the key claimed
-- with its 202 answer, the message with its timeline's admission entry, the reservation, its hold and entry).
-- pgbench turns every colon-prefixed name into a parameter, even inside a literal: the JSON text
-- below therefore has a space after each key's colon and writes the colons of times as \u003a.
-- Variables (-D): org (organisation uuid), keyid (its API key id).
\set k random(1, 9000000000000000000)
SELECT organisation_id::text, secret_sha256, permissions, revoked_at IS NOT NULL AS revoked
  FROM api_keys WHERE key_id = :keyid;
WITH org AS (
    SELECT o.sms_enabled, coalesce(NULL::text, o.default_sender_name) AS sender_name, coalesce(s.active, false) AS sender_active
    FROM organisations AS o
    LEFT JOIN senders AS s ON s.organisation_id = o.id AND s.name = coalesce(NULL::text, o.default_sender_name)
    WHERE o.id = :org::uuid),
  existing AS (
    SELECT k.fingerprint, k.state, k.response_status, k.response_body, k.response_location, (m.erased_at IS NOT NULL) AS erased
    FROM idempotency_keys AS k
    LEFT JOIN messages AS m ON m.organisation_id = k.organisation_id AND m.id = k.message_id
    WHERE k.organisation_id = :org::uuid AND k.route = 'messages' AND k.key = 'pgbench-' || (:k)::text),
  first_expiry AS (
    SELECT e.valid_until FROM credit_lots AS e
    WHERE e.organisation_id = :org::uuid AND (e.valid_until IS NULL OR e.valid_until >= current_date) AND e.amount - e.reserved - e.consumed > 0
    ORDER BY e.valid_until ASC NULLS LAST LIMIT 1),
  lot AS (
    SELECT l.id, l.amount - l.reserved - l.consumed AS free FROM credit_lots AS l, first_expiry AS f
    WHERE l.organisation_id = :org::uuid AND (l.valid_until IS NULL OR l.valid_until >= current_date)
      AND l.amount - l.reserved - l.consumed >= 1 AND l.valid_until IS NOT DISTINCT FROM f.valid_until
    ORDER BY l.id LIMIT 1
    FOR UPDATE OF l SKIP LOCKED),
  k AS (
    INSERT INTO idempotency_keys (organisation_id, route, key, fingerprint, state, message_id,
      response_status, response_body, response_location, created_at, updated_at)
    SELECT :org::uuid, 'messages', 'pgbench-' || (:k)::text, md5('f' || (:k)::text), 'done', (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid, 202::integer,
      replace(('{"id": "' || (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid || '", "to": "+261331234567", "sender_name": null, "status": "scheduled", "segments": 1, "send_at": "2099-01-01T00\u003a00\u003a00.000Z", "delivery_time": null}')::text,
        '"sender_name": null', '"sender_name": ' || to_json(org.sender_name)::text),
      ('/api/sms/v2/messages/' || (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid || '/')::text, now(), now()
    FROM org WHERE org.sms_enabled AND org.sender_active AND NOT EXISTS (SELECT 1 FROM existing)
      AND EXISTS (SELECT 1 FROM lot WHERE lot.free >= 1)
    ON CONFLICT DO NOTHING
    RETURNING message_id),
  ins AS (
    INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments, status, send_at, due_at,
      worker_id, created_at, updated_at, timeline)
    SELECT :org::uuid, k.message_id, '+261331234567', org.sender_name, 'Bench scheduled message', 1, 'scheduled',
      '2099-01-01T00:00:00Z'::timestamptz, '2099-01-01T00:00:00Z'::timestamptz, NULL::uuid, now(), now(),
      '\x00'::bytea || int8send((extract(epoch FROM now()) * 1000000)::bigint)
    FROM k, org
    RETURNING organisation_id, id),
  r AS (
    UPDATE credit_lots AS l SET reserved = l.reserved + 1
    FROM lot
    WHERE l.organisation_id = :org::uuid AND l.id = lot.id AND EXISTS (SELECT 1 FROM k) AND l.amount - l.reserved - l.consumed >= 1
    RETURNING l.id),
  h AS (
    INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
    SELECT :org::uuid, (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid, r.id, 1, 'pending', now() FROM r),
  ce AS (
    INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
    SELECT :org::uuid, r.id, (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid, 'reserve', 1, now() FROM r)
  SELECT (SELECT count(*) FROM k)::integer AS claimed, (SELECT count(*) FROM r)::integer AS reserved,
    (SELECT sender_name FROM org) AS sender_name,
    CASE WHEN (SELECT count(*) FROM k) > 0 AND NOT EXISTS (SELECT 1 FROM r)
      THEN sms_abort('the credit lot was taken by a concurrent admission') END AS aborted,
    e.fingerprint, e.state, e.response_status, e.response_body, e.response_location, e.erased
  FROM (SELECT 1) AS one LEFT JOIN existing AS e ON true;
