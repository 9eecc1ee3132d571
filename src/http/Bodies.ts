/** Service values as wire bodies, shared by the public and operator handlers. */
import type { Balance } from "../api/Schemas.ts"
import type { BalanceView } from "../ledger/Ledger.ts"
import type { Organisation } from "../organisations/Organisations.ts"

export const balanceBody = (b: BalanceView): Balance => ({
  total: b.total,
  reserved: b.reserved,
  available: b.available,
  valid_until: b.validUntil
})

export const organisationBody = (o: Organisation) => ({
  id: o.id,
  name: o.name,
  sms_enabled: o.smsEnabled,
  default_sender_name: o.defaultSenderName
})
