-- One dispatcher claim of up to 100 due messages, as src/dispatch/WorkQueue.ts claimDue issues
-- it (in its own transaction); the provider call and settlement are not part of it.
BEGIN;
WITH due AS (
    SELECT m.organisation_id, m.id, o.sms_enabled, coalesce(s.active, false) AS sender_active
    FROM messages m
    JOIN organisations o ON o.id = m.organisation_id
    LEFT JOIN senders s ON s.organisation_id = m.organisation_id AND s.name = m.sender_name
    WHERE m.status = 'scheduled' AND m.due_at <= now()
    ORDER BY m.due_at, m.id
    LIMIT 100
    FOR UPDATE OF m SKIP LOCKED),
  u AS (
    UPDATE messages m SET status = 'processing', updated_at = now(),
      submitted_at = CASE WHEN due.sms_enabled AND due.sender_active THEN now()::timestamptz END
    FROM due WHERE m.organisation_id = due.organisation_id AND m.id = due.id
    RETURNING m.organisation_id::text, m.id::text, m.batch_id::text, m.to_number, m.sender_name, m.text,
      m.segments::integer, m.status, m.send_at, m.delivery_time, m.erased_at, due.sms_enabled, due.sender_active),
  e AS (
    INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
    SELECT organisation_id::uuid, id::uuid, 'scheduled', 'processing', 'dispatch', now() FROM u)
  SELECT * FROM u;
COMMIT;
