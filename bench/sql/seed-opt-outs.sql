-- Seeds :n opt-outs of organisation :'org' (bench/scenarios/optouts.ts): the numbers +26134 followed
-- by 2, 4, ... 2 * :n over 7 digits (even ones only, so that odd ones among them are never opted out),
-- source 'api', made a second apart back from now, with time-ordered ids of when they were made, as
-- the service's. One statement: about 2 s for 100,000.
INSERT INTO opt_outs (organisation_id, phone_number, id, source, inbound_message_id, created_at)
SELECT :'org'::uuid, '+26134' || lpad((2 * i)::text, 7, '0'),
  (lpad(to_hex(floor(extract(epoch FROM t) * 1000)::bigint), 12, '0') || '7' || substr(replace(gen_random_uuid()::text, '-', ''), 14))::uuid,
  'api', NULL, t
FROM (SELECT i, now() - i * interval '1 second' AS t FROM generate_series(1, :n) AS i) AS s;
