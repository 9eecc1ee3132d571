/**
 * The numbers organisations receive on (`inbound_numbers`), owned here
 * (docs/two-way.md): a number dedicated to one organisation
 * (keyword `''`) or shared by keywords, each held once per number. Changes to one number are
 * serialised by a lock on it, so the rule holds across processes.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"

/** One holding of a number: `keyword` `''` when the number is the organisation's alone. */
export interface NumberHolding {
  readonly organisationId: string
  readonly number: string
  readonly keyword: string
}

export class InboundNumberStore extends Context.Service<
  InboundNumberStore,
  {
    /** Locks `number` until the transaction ends, and gives every holding of it. */
    readonly lockNumber: (number: string) => Fails<ReadonlyArray<NumberHolding>>
    /** Every holding of `number` (any organisation): what routing reads. */
    readonly holdings: (number: string) => Fails<ReadonlyArray<NumberHolding>>
    readonly insert: (holding: NumberHolding, at: Date) => Fails<void>
    /** Removes the organisation's holdings of `number`; how many. */
    readonly remove: (organisationId: string, number: string) => Fails<number>
    readonly list: (organisationId: string) => Fails<ReadonlyArray<NumberHolding>>
  }
>()("sms/InboundNumberStore") {
  static readonly layer = Layer.effect(
    InboundNumberStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const holdings = (number: string) =>
        fromDatabase(
          sql<NumberHolding>`SELECT organisation_id::text, number, keyword FROM inbound_numbers WHERE number = ${number}
          ORDER BY keyword, organisation_id`
        )
      return InboundNumberStore.of({
        lockNumber: (number) =>
          fromDatabase(sql`SELECT pg_advisory_xact_lock(hashtext(${`inbound_numbers:${number}`}))`).pipe(
            Effect.andThen(holdings(number))
          ),
        holdings,
        insert: (h, at) =>
          fromDatabase(
            sql`INSERT INTO inbound_numbers (organisation_id, number, keyword, created_at)
            VALUES (${h.organisationId}, ${h.number}, ${h.keyword}, ${at})
            ON CONFLICT (organisation_id, number, keyword) DO NOTHING`.pipe(Effect.asVoid)
          ),
        remove: (organisationId, number) =>
          fromDatabase(
            sql`DELETE FROM inbound_numbers WHERE organisation_id = ${organisationId} AND number = ${number}
            RETURNING keyword`.pipe(Effect.map((rows) => rows.length))
          ),
        list: (organisationId) =>
          fromDatabase(
            sql<NumberHolding>`SELECT organisation_id::text, number, keyword FROM inbound_numbers
            WHERE organisation_id = ${organisationId} ORDER BY number, keyword`
          )
      })
    })
  )
}
