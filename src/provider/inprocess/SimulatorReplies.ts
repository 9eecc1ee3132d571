/**
 * The in-process simulator's mobiles that answer (docs/two-way.md):
 * `+261340000010` answers `OK` and `+261340000011` answers `STOP`, to the sender a message came
 * from, one receipt delay after its delivery receipt; and an MO sent on the operator's demand.
 * A reply owed is a row (`simulator_replies`), so it survives restarts; once due it is handed to
 * the service's ProviderInbox as the parts an SMSC would send (one, or a long text's parts with an
 * 8-bit reference), and removed once the inbox stored them all.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable, Fails } from "../../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../../db/Statements.ts"
import { encodeSegments } from "../../domain/Segments.ts"
import type { IncomingPart, InboxUnavailable } from "../Provider.ts"
import { replyingNumbers } from "./ReplyingNumbers.ts"

/** The route the simulator's MO parts come by. */
export const simulatorMoSource = "sim"

/** Most replies one round sends. */
const replyRoundMax = 200
/** A reply handed to the inbox and not confirmed is sent again after this long. */
const replyClaimMs = 5_000

/** `text` from `from` to `to` as the parts an SMSC sends: one when it fits a segment, else parts referenced by `ref`. */
export const partsOfText = (from: string, to: string, text: string, ref: number): ReadonlyArray<IncomingPart> => {
  const { encoding, segments } = encodeSegments(text)
  const dataCoding = encoding === "GSM-7" ? 0 : 8
  return segments.map((octets, i) => ({
    source: simulatorMoSource,
    from,
    to,
    dataCoding,
    position: segments.length === 1 ? undefined : { ref: ref & 0xff, total: segments.length, seq: i + 1 },
    octets
  }))
}

interface OwedReply {
  readonly id: string
  readonly fromNumber: string
  readonly toNumber: string
  readonly text: string
}

export class SimulatorReplies extends Context.Service<
  SimulatorReplies,
  {
    /** Owes the reply of the mobile `from` (an answering test number) to `to`, due at `at`; nothing for another number. */
    readonly owe: (from: string, to: string, at: Date) => Fails<void>
    /** Sends the replies due at `at` through `send`; how many were stored. */
    readonly runDue: (
      at: Date,
      send: (part: IncomingPart) => Effect.Effect<void, InboxUnavailable>
    ) => Effect.Effect<number, DatabaseUnavailable>
    /** When the next reply falls due after `after`, if any. */
    readonly nextDue: (after: Date) => Fails<Date | undefined>
  }
>()("sms/SimulatorReplies") {
  static readonly layer = Layer.effect(
    SimulatorReplies,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return SimulatorReplies.of({
        owe: (from, to, at) => {
          const text = replyingNumbers[from]
          return text === undefined
            ? Effect.void
            : fromDatabase(
                sql`INSERT INTO simulator_replies (from_number, to_number, text, due_at) VALUES (${from}, ${to}, ${text}, ${at})`.pipe(
                  Effect.asVoid
                )
              )
        },
        runDue: (at, send) =>
          Effect.gen(function* () {
            const due = yield* fromDatabase(
              sql<OwedReply>`UPDATE simulator_replies SET claim_until = ${new Date(at.getTime() + replyClaimMs)}
              WHERE id IN (
                SELECT id FROM simulator_replies
                WHERE due_at <= ${at} AND (claim_until IS NULL OR claim_until <= ${at})
                ORDER BY due_at, id LIMIT ${replyRoundMax} FOR UPDATE SKIP LOCKED)
              RETURNING id::text, from_number, to_number, text`
            )
            let sent = 0
            for (const r of due) {
              const stored = yield* Effect.forEach(partsOfText(r.fromNumber, r.toNumber, r.text, Number(r.id)), send, {
                discard: true
              }).pipe(
                Effect.as(true),
                Effect.catchTag("InboxUnavailable", () => Effect.succeed(false))
              )
              if (!stored) continue
              yield* fromDatabase(sql`DELETE FROM simulator_replies WHERE id = ${r.id}`)
              sent++
            }
            return sent
          }),
        nextDue: (after) =>
          fromDatabase(
            sql<{ at: Date | null }>`SELECT min(CASE WHEN due_at > ${after} THEN due_at ELSE claim_until END) AS at
            FROM simulator_replies WHERE due_at > ${after} OR claim_until > ${after}`.pipe(
              Effect.map(([row]) => row?.at ?? undefined)
            )
          )
      })
    })
  )
}
