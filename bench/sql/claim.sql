-- The dispatcher taking up to 100 due messages into processing, statement for statement as
-- src/messages/MessageQueueStore.ts issues it (every route held: no route filter): claimDue leases
-- handed-over immediate sends first, then due scheduled rows, organisations in turn (they stay
-- scheduled), then start moves them to processing with their timeline rows, checking the
-- organisation and the sender. The service starts the messages it claimed by their
-- ids (a JSON list); pgbench cannot carry the claimed ids over, so start finds them by their lease
-- (the same earliest due rows, first in the index). The provider call and settlement are not part of it.
-- Variables (-D): worker (a worker id).
WITH RECURSIVE handed AS (
    SELECT m.organisation_id, m.id, m.due_at FROM messages AS m
    WHERE m.status = 'scheduled' AND m.due_at <= now() AND (m.claim_until IS NULL OR m.claim_until < now()) AND m.send_at IS NULL
    ORDER BY m.due_at LIMIT 100
    FOR UPDATE OF m SKIP LOCKED),
  orgs AS (
    (SELECT organisation_id, due_at FROM messages WHERE status = 'scheduled' ORDER BY organisation_id, due_at LIMIT 1)
    UNION ALL
    SELECT n.organisation_id, n.due_at FROM orgs CROSS JOIN LATERAL (
      SELECT m.organisation_id, m.due_at FROM messages AS m
      WHERE m.status = 'scheduled' AND m.organisation_id > orgs.organisation_id
      ORDER BY m.organisation_id, m.due_at LIMIT 1) AS n),
  due_orgs AS (SELECT organisation_id FROM orgs WHERE due_at <= now()),
  share AS (SELECT ceil(greatest(100 - (SELECT count(*) FROM handed), 0)::numeric / greatest(count(*), 1))::integer AS per
    FROM due_orgs),
  shares AS (SELECT c.* FROM due_orgs CROSS JOIN LATERAL (
      SELECT m.organisation_id, m.id, m.due_at, m.created_at, m.batch_position FROM messages AS m
      WHERE m.organisation_id = due_orgs.organisation_id AND m.status = 'scheduled' AND m.due_at <= now() AND (m.claim_until IS NULL OR m.claim_until < now())
        AND m.send_at IS NOT NULL
      ORDER BY m.due_at, m.created_at, m.batch_position
      LIMIT (SELECT per FROM share)
      FOR UPDATE OF m SKIP LOCKED) AS c),
  rest AS (SELECT c.* FROM due_orgs CROSS JOIN LATERAL (
      SELECT m.organisation_id, m.id, m.due_at, m.created_at, m.batch_position FROM messages AS m
      WHERE m.organisation_id = due_orgs.organisation_id AND m.status = 'scheduled' AND m.due_at <= now() AND (m.claim_until IS NULL OR m.claim_until < now())
        AND m.send_at IS NOT NULL AND m.id NOT IN (SELECT id FROM shares)
      ORDER BY m.due_at, m.created_at, m.batch_position
      LIMIT greatest(100 - (SELECT count(*) FROM handed) - (SELECT count(*) FROM shares), 0)
      FOR UPDATE OF m SKIP LOCKED) AS c),
  due AS (
    SELECT organisation_id, id FROM (
      SELECT organisation_id, id, due_at, 0 AS turn FROM handed
      UNION ALL
      SELECT organisation_id, id, due_at,
        row_number() OVER (PARTITION BY organisation_id ORDER BY due_at, created_at, batch_position) AS turn
      FROM (SELECT * FROM shares UNION ALL SELECT * FROM rest) AS locked) AS t
    ORDER BY turn, due_at LIMIT 100)
  UPDATE messages AS m SET worker_id = :worker::uuid, claim_until = now() + interval '10 seconds'
  FROM due WHERE m.organisation_id = due.organisation_id AND m.id = due.id
  RETURNING m.organisation_id::text, m.id::text, m.batch_id::text, m.to_number, m.sender_name, m.text,
    m.segments::integer, m.status, m.send_at, m.delivery_time, m.erased_at;
WITH x AS (
    SELECT organisation_id, id FROM messages
    WHERE status = 'scheduled' AND due_at <= now() AND worker_id = :worker::uuid
    ORDER BY due_at, created_at, batch_position
    LIMIT 100),
  c AS (
    SELECT m.organisation_id, m.id, o.sms_enabled, coalesce(s.active, false) AS sender_active
    FROM messages AS m
    JOIN x ON x.organisation_id = m.organisation_id AND x.id = m.id
    JOIN organisations AS o ON o.id = m.organisation_id
    LEFT JOIN senders AS s ON s.organisation_id = m.organisation_id AND s.name = m.sender_name
    WHERE m.status = 'scheduled'
    ORDER BY m.organisation_id, m.id
    FOR UPDATE OF m),
  u AS (
    UPDATE messages AS m SET status = 'processing', submitted_at = now(), updated_at = now(),
      worker_id = :worker::uuid, claim_until = NULL, timeline = coalesce(m.timeline, ''::bytea) || '\x15'::bytea || int8send((extract(epoch FROM now()) * 1000000)::bigint)
    FROM c WHERE m.organisation_id = c.organisation_id AND m.id = c.id AND c.sms_enabled AND c.sender_active
    RETURNING m.organisation_id, m.id)
  SELECT organisation_id::text, id::text, sms_enabled, sender_active FROM c;
