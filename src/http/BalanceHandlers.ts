/** GET /api/sms/v2/balance/ (spec 4.1). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../api/Api.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { balanceBody } from "../ledger/BalanceBody.ts"
import { atBoundary } from "../db/Boundary.ts"
import { requirePermission } from "./Permissions.ts"

export const BalanceHandlers = HttpApiBuilder.group(Api, "balance", Effect.fn(function*(handlers) {
  const ledger = yield* atBoundary(Ledger)
  return handlers.handle("get", () =>
    Effect.gen(function*() {
      const organisationId = yield* requirePermission("balance.read")
      return balanceBody(yield* ledger.balance(organisationId))
    }))
}))
