-- Seeds :n delivered messages of organisation :'org', final for :age_days days and more (the
-- newest :age_days days old, each next one a millisecond older), each with what a delivered
-- immediate send leaves once compaction has run (its receipts and simulator row are removed a
-- day after it finished, src/messages/Compaction.ts): its timeline in its row (admission,
-- provider, receipt), its idempotency key with the stored 202 answer, the reserve and consume
-- entries of its one credit on lot :lot (its hold was removed when it was settled), and the lot's
-- consumed counter, with time-ordered ids of when they were made, in their months' partitions.
-- Retention then erases them as it would erase the service's own.
BEGIN;
-- the partitions of messages of the months they were made in (the service makes this month's and later ones)
SELECT sms_message_partition(m::date) FROM generate_series(
  date_trunc('month', now() - :age_days * interval '1 day' - :n * interval '1 millisecond'), now(), interval '1 month') AS m;
WITH t AS (
    SELECT i, now() - :age_days * interval '1 day' - i * interval '1 millisecond' AS t FROM generate_series(1, :n) AS i),
  s AS (
    SELECT i, (lpad(to_hex(floor(extract(epoch FROM t) * 1000)::bigint), 12, '0') || '7' || substr(replace(gen_random_uuid()::text, '-', ''), 14))::uuid AS id, t
    FROM t),
  m AS (
    INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments, status,
      submitted_at, provider_message_id, delivery_time, created_at, updated_at, timeline)
    SELECT :'org'::uuid, id, '+26134' || lpad(i::text, 7, '0'), 'INFO', 'Bench message old enough to be erased', 1, 'delivered',
      t, 'bench-old-' || i, t, t, t,
      -- processing (admission), accepted (provider), delivered (receipt): 9 bytes an entry (src/messages/CompactTimeline.ts)
      '\x10'::bytea || int8send((extract(epoch FROM t) * 1000000)::bigint) || '\x21'::bytea
        || int8send((extract(epoch FROM t) * 1000000)::bigint) || '\x32'::bytea || int8send((extract(epoch FROM t) * 1000000)::bigint)
    FROM s),
  k AS (
    INSERT INTO idempotency_keys (organisation_id, route, key, fingerprint, state, message_id,
      response_status, response_body, response_location, created_at, updated_at)
    SELECT :'org'::uuid, 'messages', 'bench-old-' || i, md5(id::text), 'done', id, 202,
      '{"id":"' || id || '","to":"+26134' || lpad(i::text, 7, '0') || '","status":"processing"}',
      '/api/sms/v2/messages/' || id, t, t
    FROM s)
  INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
  SELECT :'org'::uuid, :lot, s.id, e.kind, 1, s.t FROM s CROSS JOIN (VALUES ('reserve'), ('consume')) AS e (kind);
UPDATE credit_lots SET consumed = consumed + :n WHERE organisation_id = :'org' AND id = :lot;
COMMIT;
-- As a live database would have them: vacuumed (hint bits set, visibility map) and analysed.
VACUUM ANALYZE messages, idempotency_keys, credit_entries, credit_lots;
