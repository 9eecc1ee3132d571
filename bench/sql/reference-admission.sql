-- The reference single-statement admission (the ceiling scenario 1 is judged against): for ONE
-- organisation, on the service's schema, claim the key with its answer, insert the message and
-- its timeline row, reserve one credit from the first valid lot and write its hold and entry, in
-- one statement and one round trip, with no key lookup and no sending-profile read. Every
-- admission of the organisation takes its lot row's lock: that row is the queue.
-- Variables (-D): org (organisation uuid).
\set k random(1, 9000000000000000000)
WITH lot AS (
    SELECT id FROM credit_lots
    WHERE organisation_id = :org::uuid AND (valid_until IS NULL OR valid_until >= current_date) AND amount - reserved - consumed > 0
    ORDER BY valid_until ASC NULLS LAST, id ASC LIMIT 1),
  k AS (
    INSERT INTO idempotency_keys (organisation_id, route, key, fingerprint, state, message_id,
      response_status, response_body, response_location, created_at, updated_at)
    VALUES (:org::uuid, 'messages', 'reference-' || (:k)::text, md5('f' || (:k)::text), 'done', (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid, 202,
      ('{"id": "' || (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid || '", "to": "+261331234567", "sender_name": "INFO", "status": "scheduled", "segments": 1, "send_at": "2099-01-01T00\u003a00\u003a00.000Z", "delivery_time": null}')::text,
      ('/api/sms/v2/messages/' || (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid || '/')::text, now(), now())
    ON CONFLICT DO NOTHING
    RETURNING message_id),
  ins AS (
    INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments, status, send_at, due_at, created_at, updated_at,
      timeline)
    SELECT :org::uuid, k.message_id, '+261331234567', 'INFO', 'Bench scheduled message', 1, 'scheduled',
      '2099-01-01T00:00:00Z'::timestamptz, '2099-01-01T00:00:00Z'::timestamptz, now(), now(), '\x00'::bytea || int8send((extract(epoch FROM now()) * 1000000)::bigint)
    FROM k
    RETURNING organisation_id, id),
  r AS (
    UPDATE credit_lots AS l SET reserved = l.reserved + 1
    FROM lot WHERE l.organisation_id = :org::uuid AND l.id = lot.id AND EXISTS (SELECT 1 FROM k)
    RETURNING l.id)
  INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
  SELECT :org::uuid, (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7' || substr(md5('m' || (:k)::text), 14))::uuid, r.id, 1, 'pending', now() FROM r;
