/**
 * Where each message's credits are, as two-phase transfers say it, for the tests' checks: pending
 * (its pending holds), posted (consumed: its consume entries), voided (released: its release
 * entries). Settlement removes a hold and writes the entry that says what it held, so the two
 * tables together say what the holds once did. An erased message has neither: its entries are
 * folded into its lots' monthly totals (`lotCreditsSql` counts them).
 */

/** SQL giving `organisation_id, message_id, pending, posted, voided` (credits, integers) per message with credits held or settled. */
export const messageCreditsSql = `SELECT organisation_id, message_id,
    coalesce(sum(amount) FILTER (WHERE state = 'pending'), 0)::integer AS pending,
    coalesce(sum(amount) FILTER (WHERE state = 'posted'), 0)::integer AS posted,
    coalesce(sum(amount) FILTER (WHERE state = 'voided'), 0)::integer AS voided
  FROM (
    SELECT organisation_id, message_id, amount, 'pending' AS state FROM credit_holds WHERE state = 'pending'
    UNION ALL
    SELECT organisation_id, message_id, amount, CASE kind WHEN 'consume' THEN 'posted' ELSE 'voided' END FROM credit_entries
    WHERE kind IN ('consume', 'release')) AS c
  GROUP BY organisation_id, message_id`

/**
 * SQL giving `organisation_id, lot_id, pending, granted, reserved, consumed, released` per lot:
 * its pending holds, and what its entries and its folded totals add up to, by kind.
 */
export const lotCreditsSql = `SELECT organisation_id, lot_id,
    coalesce(sum(amount) FILTER (WHERE kind = 'pending'), 0)::integer AS pending,
    coalesce(sum(amount) FILTER (WHERE kind = 'grant'), 0)::integer AS granted,
    coalesce(sum(amount) FILTER (WHERE kind = 'reserve'), 0)::integer AS reserved,
    coalesce(sum(amount) FILTER (WHERE kind = 'consume'), 0)::integer AS consumed,
    coalesce(sum(amount) FILTER (WHERE kind = 'release'), 0)::integer AS released
  FROM (
    SELECT organisation_id, lot_id, amount, 'pending' AS kind FROM credit_holds WHERE state = 'pending'
    UNION ALL SELECT organisation_id, lot_id, amount, kind FROM credit_entries
    UNION ALL SELECT organisation_id, lot_id, amount, kind FROM credit_entry_totals) AS c
  GROUP BY organisation_id, lot_id`
