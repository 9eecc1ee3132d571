-- Seeds :n scheduled messages of organisation :'org' (time-ordered ids of now, as the service makes
-- them: in this month's partition), the first falling due at :'due' and each
-- next :step_us microseconds later (0: all at once), each with its
-- timeline's admission entry and a pending one-credit hold on lot :lot (with its reserve entry and the
-- lot's reserved counter), as if admitted by the service: settlement then consumes them normally.
BEGIN;
WITH m AS (
    INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments,
      status, send_at, due_at, created_at, updated_at, timeline)
    SELECT :'org'::uuid, (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '7'
        || substr(replace(gen_random_uuid()::text, '-', ''), 14))::uuid, '+26133' || lpad(i::text, 7, '0'), 'INFO', 'Bench due message', 1,
      'scheduled', :'due'::timestamptz + (i - 1) * :step_us * interval '1 microsecond',
      :'due'::timestamptz + (i - 1) * :step_us * interval '1 microsecond', now(), now(), '\x00'::bytea || int8send((extract(epoch FROM now()) * 1000000)::bigint)
    FROM generate_series(1, :n) AS i
    RETURNING organisation_id, id),
  h AS (
    INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at)
    SELECT organisation_id, id, :lot, 1, 'pending', now() FROM m
    RETURNING organisation_id, message_id, lot_id, amount)
  INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
  SELECT organisation_id, lot_id, message_id, 'reserve', amount, now() FROM h;
UPDATE credit_lots SET reserved = reserved + :n WHERE organisation_id = :'org' AND id = :lot;
COMMIT;
-- Fresh statistics for the bulk-loaded tables, as autoanalyze would give them (with stale ones the
-- planner settles holds through credit_holds_pending, scanning every pending hold of the organisation).
ANALYZE messages, credit_holds, credit_entries, credit_lots;
