/**
 * The numbers organisations receive on, as the operator assigns them
 * (docs/two-way.md): a short code of 3 to 8 digits or an E.164
 * number, dedicated to one organisation (no keyword) or shared by keywords; never both, and a
 * keyword held once per number, else 409 inbound_number_taken. Checked and written under a lock
 * on the number, so two operators at once cannot break the rule.
 */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import { InboundNumberTaken, ValidationError } from "../domain/Errors.ts"
import { isInboundNumber } from "../domain/InboundAddress.ts"
import { keywordProblem, normaliseKeyword } from "../domain/Keywords.ts"
import { now } from "../clock/Time.ts"
import { InboundNumberStore, type NumberHolding } from "./InboundNumberStore.ts"

/** A holding as the operator API shows it: `keyword` null when the number is the organisation's alone. */
export interface InboundNumber {
  readonly number: string
  readonly keyword: string | null
}

const shown = (h: NumberHolding): InboundNumber => ({ number: h.number, keyword: h.keyword === "" ? null : h.keyword })

const invalid = (field: string, message: string) =>
  ValidationError.withMessage(`Invalid ${field}`, { details: [{ field, message }] })

/** Whether `holding` may be added beside `held` (every holding of the number); why not, if not. */
const conflict = (held: ReadonlyArray<NumberHolding>, holding: NumberHolding): string | undefined => {
  const others = held.filter((h) => h.organisationId !== holding.organisationId)
  if (holding.keyword === "") {
    if (others.length > 0) return "The number is held by another organisation"
    if (held.some((h) => h.keyword !== "")) return "The number is shared by keywords; remove them first"
    return undefined
  }
  if (held.some((h) => h.keyword === "")) return "The number is dedicated to an organisation"
  if (others.some((h) => h.keyword === holding.keyword))
    return "The keyword is held on this number by another organisation"
  return undefined
}

export class InboundNumbers extends Context.Service<
  InboundNumbers,
  {
    /** Gives the organisation `number`, alone (no keyword) or with `keyword`. */
    readonly assign: (
      organisationId: string,
      number: string,
      keyword: string | undefined
    ) => Effect.Effect<InboundNumber, ValidationError | InboundNumberTaken | DatabaseUnavailable>
    /** Takes every holding of `number` from the organisation (none: nothing to do). */
    readonly remove: (organisationId: string, number: string) => Effect.Effect<void, DatabaseUnavailable>
    readonly list: (organisationId: string) => Effect.Effect<ReadonlyArray<InboundNumber>, DatabaseUnavailable>
  }
>()("sms/InboundNumbers") {
  static readonly layer = Layer.effect(
    InboundNumbers,
    Effect.gen(function* () {
      const store = yield* InboundNumberStore
      const { transaction } = yield* Transactions
      return InboundNumbers.of({
        assign: (organisationId, number, keyword) =>
          Effect.gen(function* () {
            if (!isInboundNumber(number)) {
              return yield* invalid("number", "must be a short code of 3 to 8 digits or an E.164 number")
            }
            const problem = keyword === undefined ? undefined : keywordProblem(keyword)
            if (problem !== undefined) return yield* invalid("keyword", problem)
            const holding = { organisationId, number, keyword: keyword === undefined ? "" : normaliseKeyword(keyword) }
            const at = yield* now
            return yield* transaction(
              Effect.gen(function* () {
                const why = conflict(yield* store.lockNumber(number), holding)
                if (why !== undefined) return yield* InboundNumberTaken.withMessage(why)
                yield* store.insert(holding, at)
                return shown(holding)
              })
            )
          }),
        remove: (organisationId, number) => Effect.asVoid(store.remove(organisationId, number)),
        list: (organisationId) => Effect.map(store.list(organisationId), (rows) => rows.map(shown))
      })
    })
  )
}
