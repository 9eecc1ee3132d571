/**
 * A message's timeline, kept in its own row (`messages.timeline`, migration 14): 9 bytes an
 * entry, oldest first: one byte holding the codes of its status (high nibble) and its source (low
 * nibble), then its time as microseconds since 1970 (8 bytes, big-endian; timestamptz keeps
 * microseconds, so the time comes back exactly). Every status change appends its entry in the
 * statement that makes it (`appended`, since migration 15); a 4-entry timeline is 36 bytes where
 * the `message_events` rows written before took about 800. Those rows (a database upgraded from
 * before) are collapsed into the row by compaction a day after the message became final
 * (MessageStore.collapseTimelines), and migration 15 collapsed those of messages still in flight.
 * `from_status` is not kept: every writer of a timeline entry moves a message from the status it
 * holds (locked), so an entry's `from_status` is the previous entry's `to_status` (null for the
 * first); compaction checks it before it collapses rows.
 *
 * Packing and unpacking are SQL, so that one statement moves the rows and the read stays one
 * query on both drivers (pg and PGlite hand bytea back differently).
 */
import type { MessageStatus } from "../domain/MessageStatus.ts"

/** What moved a message: `matched_receipt` is verification by a receipt that came without the provider's answer. */
export const eventSources = [
  "admission",
  "provider",
  "receipt",
  "verification",
  "recovery",
  "dispatch",
  "erasure",
  "matched_receipt",
  // its recipient had opted out of the organisation's messages (docs/two-way.md)
  "opted_out"
] as const

export type EventSource = (typeof eventSources)[number]

/**
 * The codes as stored: a status's or a source's code is its index here. Append only: reordering
 * would change what collapsed timelines already say. At most 16 of each (a nibble). A list of its
 * own on purpose, not MessageStatuses (whose order is free to change): these codes are on disk.
 */
export const statusCodes = [
  "scheduled",
  "processing",
  "accepted",
  "delivered",
  "undeliverable",
  "blocked",
  "failed",
  "unknown"
] as const satisfies ReadonlyArray<MessageStatus>
export const sourceCodes = eventSources

// every status has a code (a status added to MessageStatuses without one fails to compile)
const everyStatusCoded: Exclude<MessageStatus, (typeof statusCodes)[number]> extends never ? true : false = true
void everyStatusCoded

/** Bytes of one collapsed entry. */
export const entryBytes = 9

const textArray = (values: ReadonlyArray<string>) => `ARRAY[${values.map((v) => `'${v}'`).join(", ")}]::text[]`
const statuses = textArray(statusCodes)
const sources = textArray(sourceCodes)

/** The code of the status `status` (an SQL text expression), as stored (SQL, smallint). */
export const statusCode = (status: string) => `(array_position(${statuses}, ${status}) - 1)::smallint`

/** The status whose code is `code` (an SQL expression), as text (SQL). */
export const statusOfCode = (code: string) => `(${statuses})[${code} + 1]`

/** Whether the row `alias` of message_events has a code for its status and its source (SQL). */
export const encodable = (alias: string) =>
  `(array_position(${statuses}, ${alias}.to_status) IS NOT NULL AND array_position(${sources}, ${alias}.source) IS NOT NULL)`

/**
 * One entry's bytes (SQL, bytea) for the SQL expressions `status` and `source` (text, each with a
 * code) and `at` (timestamptz).
 */
export const entry = (status: string, source: string, at: string) =>
  `(set_byte(decode('00', 'hex'), 0, (array_position(${statuses}, ${status}) - 1) * 16
      + array_position(${sources}, ${source}) - 1)
    || int8send((extract(epoch FROM ${at}) * 1000000)::bigint))`

/** The bytes of the row `alias` of message_events as one collapsed entry (SQL, bytea). */
export const packedEntry = (alias: string) => entry(`${alias}.to_status`, `${alias}.source`, `${alias}.at`)

/**
 * The timeline column `column` with one more entry (SQL, bytea): what every status change writes
 * in the statement that makes it. A message whose entries were rows (an upgraded database's
 * finished messages, never moved again) has none: the entry then starts its timeline.
 */
export const appended = (column: string, status: string, source: string, at: string) =>
  `coalesce(${column}, ''::bytea) || ${entry(status, source, at)}`

/** A new message's timeline (SQL, bytea): its admission in status `status` at `at`. */
export const admitted = (status: string, at: string) => entry(status, "'admission'", at)

/**
 * A lateral subquery giving the entries of the collapsed timeline `column` (bytea, null for none)
 * as `n` (its position, from 0), `to_status`, `source`, `at`.
 */
export const unpackedEntries = (column: string) =>
  `SELECT p.n, (${statuses})[get_byte(${column}, ${entryBytes} * p.n) / 16 + 1] AS to_status,
      (${sources})[get_byte(${column}, ${entryBytes} * p.n) % 16 + 1] AS source,
      'epoch'::timestamptz + (p.us / 1000000) * interval '1 second' + (p.us % 1000000) * interval '1 microsecond' AS at
    FROM generate_series(0, length(${column}) / ${entryBytes} - 1) AS g(n)
    CROSS JOIN LATERAL (SELECT g.n,
      ('x' || encode(substring(${column} FROM ${entryBytes} * g.n + 2 FOR 8), 'hex'))::bit(64)::bigint AS us) AS p`
