/** A balance as the API shows it: the Balance resource (spec 2.7). */
import type { BalanceView } from "./Ledger.ts"

export const balanceBody = (b: BalanceView) => ({
  total: b.total,
  reserved: b.reserved,
  available: b.available,
  valid_until: b.validUntil
})
