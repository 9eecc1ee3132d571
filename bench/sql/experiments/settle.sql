-- Settlement of one processing message on the provider's acceptance, statement for statement as
-- src/messages/Settlement.ts issues it: transition (with its event), ledger consume (locks the
-- organisation's lot row), idempotency storeForMessage, in one transaction.
-- The message comes from bench_settle (row number -> id), one per transaction.
-- Variables (-D): org.
SELECT id AS mid FROM bench_settle WHERE n = (SELECT nextval('bench_settle_seq')) \gset
BEGIN;
WITH old AS (
    SELECT organisation_id, id, status FROM messages
    WHERE organisation_id = :org AND id = :mid AND status = ANY('{processing,unknown}'::text[])
    FOR UPDATE),
  u AS (
    UPDATE messages AS m SET status = 'accepted', updated_at = now(),
      provider_message_id = coalesce('sim-' || :mid, m.provider_message_id),
      delivery_time = coalesce(NULL::timestamptz, m.delivery_time),
      verify_at = NULL::timestamptz
    FROM old WHERE m.organisation_id = old.organisation_id AND m.id = old.id
    RETURNING m.organisation_id, m.id, old.status AS from_status)
  INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
  SELECT organisation_id, id, from_status, 'accepted', 'provider', now() FROM u
  RETURNING from_status;
WITH h AS (
    UPDATE credit_holds SET state = 'posted', settled_at = now()
    WHERE organisation_id = :org AND message_id = :mid AND state = 'pending'
    RETURNING organisation_id, message_id, lot_id, amount),
  e AS (
    INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
    SELECT organisation_id, lot_id, message_id, 'consume', amount, now() FROM h)
  UPDATE credit_lots AS l
  SET reserved = l.reserved - h.amount, consumed = l.consumed + h.amount * 1::integer
  FROM h
  WHERE l.organisation_id = h.organisation_id AND l.id = h.lot_id;
UPDATE idempotency_keys SET state = 'done', response_status = 201,
    response_body = '{"id": "' || :mid || '"}', response_location = '/api/sms/v2/messages/' || :mid || '/', updated_at = now()
  WHERE organisation_id = :org AND message_id = :mid AND state = 'in_progress';
COMMIT;
