/**
 * Who an inbound message answers (docs/two-way.md): the
 * organisation that last sent a message to its sender under the number it was sent to, within a
 * window. Read from the messages table, owned by this module: by recipient through its index
 * `messages_to_number`, newest first (ids are made from the instant of creation), the window
 * bounding the ids so that older monthly partitions are not read.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"

/** How far back a reply finds the message it answers. */
export const replyWindowMs = 30 * 24 * 3_600_000

/** The lowest time-ordered id (UUIDv7) made at or after `at`. */
export const firstIdAt = (at: Date): string => {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, "0")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`
}

/** The message an inbound message answers. */
export interface RepliedMessage {
  readonly organisationId: string
  readonly id: string
}

/** The sender names a number may have been sent under: as it is, and with or without its `+`. */
export const senderNamesOf = (number: string): ReadonlyArray<string> =>
  number.startsWith("+") ? [number, number.slice(1)] : [number, `+${number}`]

export class Replies extends Context.Service<
  Replies,
  {
    /**
     * The newest message sent to `from` under the sender name `to` since `since`, of the
     * organisation `organisationId` when given (else of any); only messages handed over count.
     */
    readonly lastSentTo: (
      from: string,
      to: string,
      since: Date,
      organisationId?: string
    ) => Fails<RepliedMessage | undefined>
  }
>()("sms/Replies") {
  static readonly layer = Layer.effect(
    Replies,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return Replies.of({
        lastSentTo: (from, to, since, organisationId) =>
          fromDatabase(
            sql<RepliedMessage>`SELECT organisation_id::text, id::text FROM messages
            WHERE to_number = ${from} AND id >= ${firstIdAt(since)}::uuid
              AND sender_name = ANY(${senderNamesOf(to)}::text[])
              AND status IN ('accepted', 'delivered', 'undeliverable', 'unknown')
              ${organisationId === undefined ? sql`` : sql`AND organisation_id = ${organisationId}`}
            ORDER BY id DESC LIMIT 1`.pipe(Effect.map((rows) => rows[0]))
          )
      })
    })
  )
}
