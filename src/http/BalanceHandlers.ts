/** GET /api/sms/v2/balance/ (docs/integrators.md#balance). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { requirePermission } from "./Permissions.ts"
import { balanceOf } from "./Representations.ts"

export const BalanceHandlers = HttpApiBuilder.group(
  Api,
  "balance",
  Effect.fn(function* (handlers) {
    const ledger = yield* Ledger
    return handlers.handle("get", () =>
      Effect.gen(function* () {
        const organisationId = yield* requirePermission("balance.read")
        return balanceOf(yield* ledger.balance(organisationId))
      })
    )
  })
)
