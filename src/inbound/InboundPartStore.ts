/**
 * The parts of inbound (mobile-originated) messages as they arrived (`inbound_parts`), owned here
 * (docs/two-way.md): committed before the provider is told they
 * were received, then joined into messages by the assembler (Assembler.ts) straight from this
 * table, so nothing that must survive lives in a process's memory. A part the provider sends
 * again (its acknowledgement was lost) is recognised while its message waits, and for a while
 * after it was made (`repeatWindowMs`), and stored once.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase, replanned } from "../db/Statements.ts"
import type { IncomingPart } from "../provider/Provider.ts"

/** How long a joined part is kept to recognise it when it comes again. */
export const repeatWindowMs = 10 * 60_000

/** The parts of one message: a whole message is a group of its own (`key` = minus its part's id). */
export interface PartGroup {
  readonly source: string
  readonly fromNumber: string
  readonly toNumber: string
  readonly total: number
  /** The reference of its parts, or minus the id of the part of a whole message. */
  readonly key: number
}

export interface StoredPart {
  readonly id: number
  readonly seq: number
  readonly dataCoding: number
  readonly octets: Uint8Array
  readonly receivedAt: Date
}

const groupKey = "CASE WHEN ref IS NULL THEN -id ELSE ref END"

export class InboundPartStore extends Context.Service<
  InboundPartStore,
  {
    /** Stores parts as they arrived at `at`, in one statement; a part already stored (waiting, or joined within the repeat window) is not stored again. */
    readonly store: (parts: ReadonlyArray<IncomingPart>, at: Date) => Fails<void>
    /**
     * Up to `limit` groups ready to be joined at `at`: every part there, or the first one received
     * before `expiredBefore`; oldest first.
     */
    readonly due: (at: Date, expiredBefore: Date, limit: number) => Fails<ReadonlyArray<PartGroup>>
    /** Locks the waiting parts of `group` for the caller's transaction (skipping what another holds). */
    readonly lock: (group: PartGroup) => Fails<ReadonlyArray<StoredPart>>
    /** Marks parts as joined into their message at `at`. */
    readonly markJoined: (ids: ReadonlyArray<number>, at: Date) => Fails<void>
    /** When the oldest waiting incomplete group expires, given its first part's age limit: its first part's arrival. */
    readonly oldestWaiting: Fails<Date | undefined>
    /** Removes parts joined before `before`; how many. */
    readonly forgetJoined: (before: Date, limit: number) => Fails<number>
  }
>()("sms/InboundPartStore") {
  static readonly layer = Layer.effect(
    InboundPartStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return InboundPartStore.of({
        store: (parts, at) => {
          if (parts.length === 0) return Effect.void
          const rows = parts.map((p) => ({
            source: p.source,
            from_number: p.from,
            to_number: p.to,
            data_coding: p.dataCoding,
            ref: p.position?.ref ?? null,
            total: p.position?.total ?? 1,
            seq: p.position?.seq ?? 1,
            octets: Buffer.from(p.octets).toString("hex")
          }))
          return fromDatabase(
            replanned(sql`WITH x AS (
              SELECT DISTINCT ON (source, from_number, to_number, ref, total, seq, octets) *
              FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(source text, from_number text, to_number text,
                data_coding integer, ref integer, total integer, seq integer, octets text))
            INSERT INTO inbound_parts (source, from_number, to_number, data_coding, ref, total, seq, octets, received_at)
            SELECT x.source, x.from_number, x.to_number, x.data_coding, x.ref, x.total, x.seq, decode(x.octets, 'hex'), ${at}
            FROM x
            WHERE NOT EXISTS (
              SELECT 1 FROM inbound_parts AS p
              WHERE p.from_number = x.from_number AND p.to_number = x.to_number AND p.source = x.source
                AND p.ref IS NOT DISTINCT FROM x.ref AND p.total = x.total AND p.seq = x.seq
                -- while its message waits, a part of a long one is the same by its place; a whole
                -- message, or a part of a message already made, only with the same octets too
                AND ((p.joined_at IS NULL AND x.ref IS NOT NULL) OR (
                  (p.joined_at IS NULL OR p.joined_at > ${new Date(at.getTime() - repeatWindowMs)})
                  AND p.octets = decode(x.octets, 'hex'))))`).pipe(Effect.asVoid)
          )
        },
        due: (at, expiredBefore, limit) =>
          fromDatabase(
            replanned(sql<PartGroup>`SELECT source, from_number, to_number, total, ${sql.literal(groupKey)} AS key
            FROM inbound_parts WHERE joined_at IS NULL AND received_at <= ${at}
            GROUP BY source, from_number, to_number, total, ${sql.literal(groupKey)}
            HAVING count(DISTINCT seq) >= total OR min(received_at) <= ${expiredBefore}
            ORDER BY min(received_at), min(id) LIMIT ${limit}`).pipe(
              Effect.map((rows) => rows.map((r) => ({ ...r, key: Number(r.key) })))
            )
          ),
        lock: (g) =>
          fromDatabase(
            sql<{
              id: string
              seq: number
              dataCoding: number
              octets: Uint8Array
              receivedAt: Date
            }>`SELECT id::text, seq,
              data_coding, octets, received_at FROM inbound_parts
            WHERE joined_at IS NULL AND from_number = ${g.fromNumber} AND to_number = ${g.toNumber}
              AND source = ${g.source} AND total = ${g.total}
              AND ${g.key < 0 ? sql`id = ${-g.key} AND ref IS NULL` : sql`ref = ${g.key}`}
            ORDER BY id FOR UPDATE SKIP LOCKED`.pipe(
              Effect.map((rows) => rows.map((r) => ({ ...r, id: Number(r.id) })))
            )
          ),
        markJoined: (ids, at) =>
          fromDatabase(
            sql`UPDATE inbound_parts SET joined_at = ${at} WHERE id = ANY(${ids.map(String)}::bigint[])`.pipe(
              Effect.asVoid
            )
          ),
        oldestWaiting: fromDatabase(
          sql<{ at: Date | null }>`SELECT min(received_at) AS at FROM inbound_parts WHERE joined_at IS NULL`.pipe(
            Effect.map(([row]) => row?.at ?? undefined)
          )
        ),
        forgetJoined: (before, limit) =>
          fromDatabase(
            sql<{ n: number }>`WITH gone AS (
              DELETE FROM inbound_parts WHERE id IN (
                SELECT id FROM inbound_parts WHERE joined_at IS NOT NULL AND joined_at < ${before} LIMIT ${limit})
              RETURNING id)
            SELECT count(*)::integer AS n FROM gone`.pipe(Effect.map(([row]) => row?.n ?? 0))
          )
      })
    })
  )
}
