-- Experiment: settlement of 100 accepted messages in one transaction with set-based statements
-- (what the dispatcher could do with the results of one claim): one transition, one consume
-- (one lock of the lot row for 100 messages), one idempotency store.
-- The messages come from bench_settle rows (b-1)*100+1 .. b*100, passed as an array of ids as the
-- service would pass them.
-- Variables (-D): org.
SELECT nextval('bench_settle_seq') AS b \gset
BEGIN;
WITH old AS (
    SELECT organisation_id, id, status FROM messages
    WHERE organisation_id = :org AND status = ANY('{processing,unknown}'::text[])
      AND id = ANY(ARRAY(SELECT id FROM bench_settle WHERE n > (:b - 1) * 100 AND n <= :b * 100))
    FOR UPDATE),
  u AS (
    UPDATE messages AS m SET status = 'accepted', updated_at = now(),
      provider_message_id = 'sim-' || m.id, verify_at = NULL::timestamptz
    FROM old WHERE m.organisation_id = old.organisation_id AND m.id = old.id
    RETURNING m.organisation_id, m.id, old.status AS from_status)
  INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
  SELECT organisation_id, id, from_status, 'accepted', 'provider', now() FROM u;
UPDATE idempotency_keys SET state = 'done', response_status = 201,
    response_body = '{"id": "' || message_id || '"}', response_location = '/api/sms/v2/messages/' || message_id || '/', updated_at = now()
  WHERE organisation_id = :org AND state = 'in_progress'
    AND message_id = ANY(ARRAY(SELECT id FROM bench_settle WHERE n > (:b - 1) * 100 AND n <= :b * 100));
WITH h AS (
    UPDATE credit_holds SET state = 'posted', settled_at = now()
    WHERE organisation_id = :org AND state = 'pending'
      AND message_id = ANY(ARRAY(SELECT id FROM bench_settle WHERE n > (:b - 1) * 100 AND n <= :b * 100))
    RETURNING organisation_id, message_id, lot_id, amount),
  e AS (
    INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
    SELECT organisation_id, lot_id, message_id, 'consume', amount, now() FROM h),
  t AS (SELECT organisation_id, lot_id, sum(amount)::integer AS amount FROM h GROUP BY organisation_id, lot_id)
  UPDATE credit_lots AS l SET reserved = l.reserved - t.amount, consumed = l.consumed + t.amount
  FROM t WHERE l.organisation_id = t.organisation_id AND l.id = t.lot_id;
COMMIT;
